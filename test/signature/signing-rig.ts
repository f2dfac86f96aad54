import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll } from 'vitest';
import { repoRoot } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * Real OpenSSH keys and allowed_signers files, made with ssh-keygen at test time. A missing
 * ssh-keygen is a failing sentence, never a skip.
 */
export interface SigningRig {
  dir: string;
  /** Private key files: `team` (ed25519) and `ops` (RSA) are allowed signers, `stranger` is not. */
  keys: { team: string; ops: string; stranger: string };
  /** team@example.com -> the ed25519 key, ops@example.com -> the RSA key. */
  allowedSigners: string;
  /** `ssh-keygen -Y sign` over `bytes`: the armored signature. */
  signBytes(bytes: Buffer, key: string, namespace?: string): Buffer;
  cleanup(): void;
}

export function createSigningRig(): SigningRig {
  try {
    execFileSync('ssh-keygen', ['-h'], { stdio: 'ignore' });
  } catch (error) {
    // -h is not an option: ssh-keygen exits 1 with its usage, which is fine; ENOENT is not.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error('these tests need ssh-keygen (apt-get install openssh-client)', { cause: error });
  }
  const dir = mkdtempSync(join(tmpdir(), 'mpprov-sig-rig-'));
  const keygen = (name: string, type: string[]): string => {
    const file = join(dir, name);
    execFileSync('ssh-keygen', ['-q', ...type, '-N', '', '-C', name, '-f', file], { stdio: 'ignore' });
    return file;
  };
  const keys = {
    team: keygen('team', ['-t', 'ed25519']),
    ops: keygen('ops', ['-t', 'rsa', '-b', '3072']),
    stranger: keygen('stranger', ['-t', 'ed25519']),
  };
  const publicKey = (file: string): string => readFileSync(`${file}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
  const allowedSigners = join(dir, 'allowed_signers');
  writeFileSync(
    allowedSigners,
    `# the network team\nteam@example.com ${publicKey(keys.team)}\nops@example.com ${publicKey(keys.ops)}\n`,
  );
  let count = 0;
  return {
    dir,
    keys,
    allowedSigners,
    signBytes(bytes, key, namespace = 'mpprov') {
      const file = join(dir, `message-${(count += 1)}`);
      writeFileSync(file, bytes);
      execFileSync('ssh-keygen', ['-Y', 'sign', '-f', key, '-n', namespace, file], { stdio: 'ignore' });
      return readFileSync(`${file}.sig`);
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A signing rig for the tests of one file, made as the file is collected and removed after its tests. */
export function useSigningRig(): SigningRig {
  const rig = createSigningRig();
  afterAll(() => rig.cleanup());
  return rig;
}

/** Writes a stick folder: `{ 'mpprov.yaml': '...', 'certs/ca.pem': '...' }`. */
export function writeStick(root: string, files: Record<string, string | Buffer>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

/** Every regular file under `root`, by its path from the root with '/': what a caller has read. */
export function readStick(root: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (rel: string): void => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.set(path, readFileSync(join(root, path)));
    }
  };
  walk('');
  return files;
}

export const PROFILE_FILES = [
  'secrets/admin.pw',
  'certs/device-ca.pem',
  'certs/radius-ca.pem',
  'certs/mp01-cert.pem',
  'certs/mp01-key.pem',
];

/** The admin password of profiles/eap-tls-pem.yaml: an output that holds it leaked a secret. */
export const PROFILE_ADMIN_PASSWORD = readFileSync(`${repoRoot}profiles/secrets/admin.pw`, 'utf8').trim();

/** Stick folders holding profiles/eap-tls-pem.yaml as mpprov.yaml and the files it names, each new. */
export function profileSticks(name: string): () => string {
  const work = tempFolder(name);
  let count = 0;
  return () => {
    const root = join(work, `stick-${(count += 1)}`);
    mkdirSync(join(root, 'certs'), { recursive: true });
    mkdirSync(join(root, 'secrets'));
    copyFileSync(`${repoRoot}profiles/eap-tls-pem.yaml`, join(root, 'mpprov.yaml'));
    for (const file of PROFILE_FILES) copyFileSync(`${repoRoot}profiles/${file}`, join(root, file));
    return root;
  };
}
