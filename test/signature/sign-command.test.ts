import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStick } from '../../src/config/index.js';
import { referencedFiles, verifyStickSignature } from '../../src/signature/index.js';
import { repoRoot, runCli } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';
import { PROFILE_ADMIN_PASSWORD, PROFILE_FILES, profileSticks, readStick, useSigningRig } from './signing-rig.js';

/** `mpprov sign DIR --key FILE` as a person runs it (the built CLI, a real child process), then verified. */
const ADMIN_PASSWORD = PROFILE_ADMIN_PASSWORD;

const rig = useSigningRig();
const profileStick = profileSticks('sign-cli');
const work = tempFolder('sign-cli-other');

/** The agent's side: the stick read once, the references from the loaded configuration. */
async function verify(root: string) {
  const files = readStick(root);
  const loaded = await loadStick(join(root, 'mpprov.yaml'));
  const manifestBytes = files.get('mpprov.sha256');
  const signatureBytes = files.get('mpprov.sha256.sig');
  files.delete('mpprov.sha256');
  files.delete('mpprov.sha256.sig');
  return verifyStickSignature({
    manifestBytes,
    signatureBytes,
    allowedSignersFile: rig.allowedSigners,
    filesByPath: files,
    configName: 'mpprov.yaml',
    referencedPaths: referencedFiles(loaded.model),
  });
}

describe('mpprov sign', () => {
  it('writes a list sha256sum checks and a signature ssh-keygen and the agent accept', async () => {
    const root = profileStick();
    const result = await runCli(['sign', root, '--key', rig.keys.team]);
    const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', `${rig.keys.team}.pub`])
      .toString()
      .split(' ')[1];
    expect(result.stdout).toBe(
      `${root}: signed with ED25519 key ${fingerprint}; mpprov.sha256 lists mpprov.yaml, ${PROFILE_FILES.join(', ')}\n`,
    );
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(ADMIN_PASSWORD);

    const checked = execFileSync('sha256sum', ['-c', '--strict', 'mpprov.sha256'], { cwd: root }).toString();
    expect(checked.trim().split('\n')).toEqual(['mpprov.yaml: OK', ...PROFILE_FILES.map((f) => `${f}: OK`)]);
    const verified = execFileSync(
      'ssh-keygen',
      [
        '-Y',
        'verify',
        '-f',
        rig.allowedSigners,
        '-I',
        'team@example.com',
        '-n',
        'mpprov',
        '-s',
        join(root, 'mpprov.sha256.sig'),
      ],
      {
        input: readFileSync(join(root, 'mpprov.sha256')),
      },
    ).toString();
    expect(verified).toContain('Good "mpprov" signature for team@example.com');
    expect(await verify(root)).toMatchObject({ status: 'signed', principal: 'team@example.com' });
  });

  it('signs again after a change, replacing both files and leaving no temporary file', async () => {
    const root = profileStick();
    expect((await runCli(['sign', root, '--key', rig.keys.team])).code).toBe(0);
    copyFileSync(`${repoRoot}profiles/certs/client-ca.pem`, join(root, 'certs/radius-ca.pem'));
    expect((await verify(root)).status).toBe('refused');

    const again = await runCli(['sign', root, '--key', rig.keys.ops]);
    expect(again.code).toBe(0);
    expect(await verify(root)).toMatchObject({ status: 'signed', principal: 'ops@example.com' });
    expect(readdirSync(root).sort()).toEqual(['certs', 'mpprov.sha256', 'mpprov.sha256.sig', 'mpprov.yaml', 'secrets']);
  });

  it('lists more files with --include, and refuses one outside the folder', async () => {
    const root = profileStick();
    writeFileSync(join(root, 'README.txt'), 'made by the network team\n');
    const result = await runCli(['sign', root, '--key', rig.keys.team, '--include', 'README.txt']);
    expect(result.code).toBe(0);
    expect(readFileSync(join(root, 'mpprov.sha256'), 'utf8')).toMatch(/^[0-9a-f]{64} {2}README\.txt$/m);
    const verified = await verify(root);
    expect(verified.status === 'signed' && verified.listed).toContain('README.txt');

    const other = profileStick();
    const outside = await runCli(['sign', other, '--key', rig.keys.team, '--include', '../stick-1/mpprov.yaml']);
    expect(outside.stdout).toBe(
      `../stick-1/mpprov.yaml:1:1  (file)  cannot be listed: the path leaves the stick through '..'  (list only files inside the stick)\n${other}: not signed\n`,
    );
    expect(outside.code).toBe(1);
    expect(existsSync(join(other, 'mpprov.sha256'))).toBe(false);
  });

  it('refuses a configuration that does not load cleanly, writing nothing', async () => {
    const root = profileStick();
    rmSync(join(root, 'certs/mp01-key.pem'));
    const result = await runCli(['sign', root, '--key', rig.keys.team]);
    expect(result.stdout).toContain("file 'certs/mp01-key.pem' does not exist");
    expect(result.stdout.endsWith(`${root}: not signed: the configuration is invalid (1 error, 0 warnings)\n`)).toBe(
      true,
    );
    expect(result.code).toBe(1);
    expect(existsSync(join(root, 'mpprov.sha256'))).toBe(false);
    expect(existsSync(join(root, 'mpprov.sha256.sig'))).toBe(false);
  });

  it('refuses a file that is not an SSH key, writing nothing', async () => {
    const root = profileStick();
    const notAKey = join(work, 'not-a-key');
    writeFileSync(notAKey, 'just text\n');
    const result = await runCli(['sign', root, '--key', notAKey]);
    expect(result.stdout).toMatch(
      new RegExp(
        `^${notAKey}:1:1  \\(file\\)  ssh-keygen could not sign with this key \\(.+\\)  \\(give an SSH private key`,
      ),
    );
    expect(result.code).toBe(1);
    expect(readdirSync(root).sort()).toEqual(['certs', 'mpprov.yaml', 'secrets']);
  });

  it('refuses a target that is not a folder as a usage error', async () => {
    const result = await runCli(['sign', join(work, 'nowhere'), '--key', rig.keys.team]);
    expect(result.stderr).toBe(
      `mpprov sign: ${join(work, 'nowhere')} is not a folder (give the stick's folder, which holds mpprov.yaml)\n`,
    );
    expect(result.code).toBe(64);
  });
});
