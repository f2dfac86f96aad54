import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  describeSignature,
  signatureProblems,
  signStick,
  type StickSignature,
  type StickSignatureInput,
  verifyStickSignature,
} from '../../src/signature/index.js';
import { tempFolder } from '../support/temp-folder.js';
import { readStick, useSigningRig, writeStick } from './signing-rig.js';

/**
 * Verification with real ssh-keygen keys and signatures: every way a stick can fail to be what its
 * signer signed is refused, naming the file (and the list's line).
 */
const STICK = {
  'mpprov.yaml': 'version: 1\nmonitoring_points: []\n',
  'secrets/admin.pw': 'Adm1n-SeCrEt-77\n',
  'certs/device-ca.pem': '-----BEGIN CERTIFICATE-----\nnot really\n-----END CERTIFICATE-----\n',
  'notes/README.txt': 'how this stick was made\n',
};
const REFERENCED = ['secrets/admin.pw', './certs/device-ca.pem'];
const sha = (text: string): string => execFileSync('sha256sum', { input: text }).toString().slice(0, 64);

const rig = useSigningRig();
const work = tempFolder('verify');
let count = 0;

function freshStick(files: Record<string, string | Buffer> = STICK): string {
  const root = join(work, `stick-${(count += 1)}`);
  writeStick(root, files);
  return root;
}

/** A stick signed by `mpprov sign`'s own function, listing the references and notes/README.txt. */
async function signedStick(key = rig.keys.team): Promise<string> {
  const root = freshStick();
  const outcome = await signStick(root, key, {
    configName: 'mpprov.yaml',
    referencedPaths: REFERENCED,
    extraPaths: ['notes/README.txt'],
  });
  expect(outcome.ok).toBe(true);
  return root;
}

/** What a caller has: every file of the stick read once, the two signature files apart. */
function inputFor(root: string, overrides: Partial<StickSignatureInput> = {}): StickSignatureInput {
  const files = readStick(root);
  const manifestBytes = files.get('mpprov.sha256');
  const signatureBytes = files.get('mpprov.sha256.sig');
  files.delete('mpprov.sha256');
  files.delete('mpprov.sha256.sig');
  return {
    manifestBytes,
    signatureBytes,
    allowedSignersFile: rig.allowedSigners,
    filesByPath: files,
    configName: 'mpprov.yaml',
    referencedPaths: REFERENCED,
    ...overrides,
  };
}

function refusedProblems(result: StickSignature): { file: string; line: number; column: number; message: string }[] {
  expect(result.status).toBe('refused');
  if (result.status !== 'refused') return [];
  return result.problems.map((p) => ({ file: p.file, line: p.line, column: p.column, message: p.message }));
}

describe('a signed stick', () => {
  it('is accepted with its signer named (ed25519 key)', async () => {
    const result = await verifyStickSignature(inputFor(await signedStick()));
    const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', `${rig.keys.team}.pub`])
      .toString()
      .split(' ')[1];
    expect(result).toEqual({
      status: 'signed',
      principal: 'team@example.com',
      key: `ED25519 key ${fingerprint}`,
      listed: ['mpprov.yaml', 'secrets/admin.pw', 'certs/device-ca.pem', 'notes/README.txt'],
    });
    expect(describeSignature(result)).toBe(`signed by team@example.com (ED25519 key ${fingerprint}), 4 files checked`);
    expect(signatureProblems(result, true)).toEqual([]);
  });

  it('is accepted with its signer named (RSA key)', async () => {
    const result = await verifyStickSignature(inputFor(await signedStick(rig.keys.ops)));
    expect(result.status).toBe('signed');
    expect(result.status === 'signed' && result.principal).toBe('ops@example.com');
    expect(result.status === 'signed' && result.key).toMatch(/^RSA key SHA256:/);
  });

  it('takes hashes the caller already computed in place of bytes', async () => {
    const root = await signedStick();
    const input = inputFor(root);
    const hashes = new Map(
      [...input.filesByPath].map(([path, bytes]) => [
        path,
        execFileSync('sha256sum', { input: bytes }).toString().slice(0, 64),
      ]),
    );
    expect((await verifyStickSignature({ ...input, filesByPath: hashes })).status).toBe('signed');
  });
});

describe('listed files beyond the references', () => {
  const withoutNotes = (root: string, overrides: Partial<StickSignatureInput> = {}): StickSignatureInput => {
    const input = inputFor(root, overrides);
    const files = new Map(input.filesByPath);
    files.delete('notes/README.txt');
    return { ...input, filesByPath: files };
  };

  it('are read through readListed, only after the signature verified', async () => {
    const root = await signedStick();
    const asked: string[] = [];
    const readListed = (path: string): Promise<Buffer> => {
      asked.push(path);
      return Promise.resolve(readFileSync(join(root, path)));
    };
    expect((await verifyStickSignature(withoutNotes(root, { readListed }))).status).toBe('signed');
    expect(asked).toEqual(['notes/README.txt']);

    writeFileSync(
      join(root, 'mpprov.sha256.sig'),
      rig.signBytes(readFileSync(join(root, 'mpprov.sha256')), rig.keys.stranger),
    );
    asked.length = 0;
    expect((await verifyStickSignature(withoutNotes(root, { readListed }))).status).toBe('refused');
    expect(asked).toEqual([]);
  });

  it('count as missing when readListed cannot read them', async () => {
    const root = await signedStick();
    const readListed = (): Promise<Buffer> => Promise.reject(new Error('EIO'));
    expect(refusedProblems(await verifyStickSignature(withoutNotes(root, { readListed })))).toEqual([
      { file: 'mpprov.sha256', line: 4, column: 67, message: "'notes/README.txt' is listed but not on the stick" },
    ]);
  });
});

describe('an unsigned stick', () => {
  it('with neither file is unsigned: a problem only when signatures are required', async () => {
    const result = await verifyStickSignature(inputFor(freshStick()));
    expect(result).toEqual({
      status: 'unsigned',
      problems: [
        {
          severity: 'error',
          file: 'mpprov.sha256.sig',
          line: 1,
          column: 1,
          path: '',
          message: 'the stick is not signed',
          hint: 'sign the stick again: mpprov sign DIR --key FILE',
        },
      ],
    });
    expect(signatureProblems(result, false)).toEqual([]);
    expect(signatureProblems(result, true).map((p) => p.message)).toEqual(['the stick is not signed']);
    expect(describeSignature(result)).toBe('not signed');
  });

  it('with a list but no signature is unsigned, saying so', async () => {
    const root = await signedStick();
    unlinkSync(join(root, 'mpprov.sha256.sig'));
    const result = await verifyStickSignature(inputFor(root));
    expect(result.status).toBe('unsigned');
    expect(signatureProblems(result, true).map((p) => p.message)).toEqual([
      'the stick is not signed: mpprov.sha256 has no mpprov.sha256.sig beside it',
    ]);
  });

  it('with a signature but no list is refused', async () => {
    const root = await signedStick();
    unlinkSync(join(root, 'mpprov.sha256'));
    const result = await verifyStickSignature(inputFor(root));
    expect(refusedProblems(result)).toEqual([
      {
        file: 'mpprov.sha256',
        line: 1,
        column: 1,
        message: 'mpprov.sha256.sig is on the stick but mpprov.sha256, the list it signs, is not',
      },
    ]);
    // A refused signature stops the stick even where signatures are not required: it is altered.
    expect(signatureProblems(result, false)).toHaveLength(1);
  });
});

describe('a stick that is not what was signed', () => {
  it('is refused when the list was altered after signing', async () => {
    const root = await signedStick();
    const manifest = readFileSync(join(root, 'mpprov.sha256'), 'utf8');
    writeFileSync(join(root, 'mpprov.sha256'), manifest.replace(/^[0-9a-f]{64} {2}certs/m, `${sha('evil')}  certs`));
    writeStick(root, { 'certs/device-ca.pem': 'evil' });
    const problems = refusedProblems(await verifyStickSignature(inputFor(root)));
    expect(problems).toHaveLength(1);
    expect(problems[0]?.file).toBe('mpprov.sha256.sig');
    expect(problems[0]?.message).toMatch(
      /^the signature of team@example\.com does not verify: mpprov\.sha256 was changed after signing, or the signature is not for "mpprov" \(ssh-keygen: .+\)$/,
    );
  });

  it('is refused when a listed file changed after signing, naming it and its line', async () => {
    const root = await signedStick();
    writeStick(root, { 'certs/device-ca.pem': 'another CA\n' });
    const result = await verifyStickSignature(inputFor(root));
    expect(refusedProblems(result)).toEqual([
      {
        file: 'mpprov.sha256',
        line: 3,
        column: 1,
        message: "'certs/device-ca.pem' changed after the stick was signed: its SHA-256 is not the listed one",
      },
    ]);
    expect(result.status === 'refused' && result.principal).toBe('team@example.com');
    expect(describeSignature(result)).toBe('signature of team@example.com refused');
  });

  it('is refused when the configuration references a file the list does not hold', async () => {
    const root = await signedStick();
    writeStick(root, { 'certs/new-ca.pem': 'added later\n' });
    const result = await verifyStickSignature(inputFor(root, { referencedPaths: [...REFERENCED, 'certs/new-ca.pem'] }));
    expect(refusedProblems(result)).toEqual([
      {
        file: 'mpprov.sha256',
        line: 1,
        column: 1,
        message: "'certs/new-ca.pem' (referenced by mpprov.yaml) is not listed, so its content is not signed",
      },
    ]);
  });

  it('is refused when a listed file is missing', async () => {
    const root = await signedStick();
    unlinkSync(join(root, 'notes/README.txt'));
    expect(refusedProblems(await verifyStickSignature(inputFor(root)))).toEqual([
      { file: 'mpprov.sha256', line: 4, column: 67, message: "'notes/README.txt' is listed but not on the stick" },
    ]);
  });

  it('is refused when the configuration file itself is not listed', async () => {
    const root = freshStick();
    const manifest = Buffer.from(
      `${sha(STICK['secrets/admin.pw'])}  secrets/admin.pw\n${sha(STICK['certs/device-ca.pem'])}  certs/device-ca.pem\n`,
    );
    writeStick(root, { 'mpprov.sha256': manifest, 'mpprov.sha256.sig': rig.signBytes(manifest, rig.keys.team) });
    expect(refusedProblems(await verifyStickSignature(inputFor(root)))).toEqual([
      {
        file: 'mpprov.sha256',
        line: 1,
        column: 1,
        message: "'mpprov.yaml' (the configuration file) is not listed, so its content is not signed",
      },
    ]);
  });
});

describe("a signature that is not an allowed signer's", () => {
  it('is refused when the signer is not in allowed_signers, naming the key', async () => {
    const result = await verifyStickSignature(inputFor(await signedStick(rig.keys.stranger)));
    const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', `${rig.keys.stranger}.pub`])
      .toString()
      .split(' ')[1];
    expect(refusedProblems(result)).toEqual([
      {
        file: 'mpprov.sha256.sig',
        line: 1,
        column: 1,
        message: `the stick is signed by a key that is not in the allowed signers (ED25519 key ${fingerprint})`,
      },
    ]);
    expect(result.status === 'refused' && result.principal).toBeUndefined();
  });

  it("is refused naming the entry when the signer's key is listed but outside the validity its entry gives", async () => {
    const root = await signedStick(rig.keys.stranger);
    const stranger = readFileSync(`${rig.keys.stranger}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
    const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', `${rig.keys.stranger}.pub`])
      .toString()
      .split(' ')[1];
    const cases = {
      expired: [`valid-before="20200101"`, 'expired at 2020-01-01T00:00:00 (valid-before)'],
      early: [`valid-after="20991231Z"`, 'is valid only from 2099-12-31T00:00:00 (valid-after)'],
    };
    for (const [name, [option, why]] of Object.entries(cases)) {
      const allowed = join(work, `allowed-${name}`);
      writeFileSync(
        allowed,
        `# rotated keys\nteam@example.com ${readFileSync(`${rig.keys.team}.pub`, 'utf8').split(' ').slice(0, 2).join(' ')}\nformer@example.com ${option} ${stranger}\n`,
      );
      const problems = refusedProblems(await verifyStickSignature(inputFor(root, { allowedSignersFile: allowed })));
      expect(problems, name).toEqual([
        {
          file: 'mpprov.sha256.sig',
          line: 1,
          column: 1,
          message: `the stick is signed by ED25519 key ${fingerprint} whose entry in the allowed signers (line 3) ${why}`,
        },
      ]);
    }
  });

  it('is refused when it was made for another namespace', async () => {
    const root = await signedStick();
    const manifest = readFileSync(join(root, 'mpprov.sha256'));
    writeFileSync(join(root, 'mpprov.sha256.sig'), rig.signBytes(manifest, rig.keys.team, 'git'));
    const problems = refusedProblems(await verifyStickSignature(inputFor(root)));
    expect(problems).toHaveLength(1);
    expect(problems[0]?.message).toMatch(
      /^the signature of team@example\.com does not verify: .*\(ssh-keygen: .*namespace.*\)$/,
    );
  });

  it("is refused when allowed_signers keeps the key to another namespace, naming the laptop's file", async () => {
    const root = await signedStick();
    const allowedSignersFile = join(work, `git-only-${(count += 1)}`);
    const publicKey = readFileSync(`${rig.keys.team}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
    writeFileSync(allowedSignersFile, `team@example.com namespaces="git" ${publicKey}\n`);
    const problems = refusedProblems(await verifyStickSignature(inputFor(root, { allowedSignersFile })));
    expect(problems).toHaveLength(1);
    // ssh-keygen names the private copy it was given; the sentence names the file a person can fix.
    expect(problems[0]?.message).toBe(
      `the signature of team@example.com does not verify: mpprov.sha256 was changed after signing, or the signature is not for "mpprov" (ssh-keygen: ${allowedSignersFile}:1: key is not permitted for use in signature namespace "mpprov")`,
    );
  });

  it('is refused when it is garbage', async () => {
    const root = await signedStick();
    writeFileSync(
      join(root, 'mpprov.sha256.sig'),
      '-----BEGIN SSH SIGNATURE-----\nbm90IGEgc2lnbmF0dXJl\n-----END SSH SIGNATURE-----\n',
    );
    const problems = refusedProblems(await verifyStickSignature(inputFor(root)));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: 'mpprov.sha256.sig', line: 1, column: 1 });
    expect(problems[0]?.message).toMatch(
      /^mpprov\.sha256\.sig is not a valid "mpprov" signature of mpprov\.sha256 \(ssh-keygen: .+\)$/,
    );
  });

  it('is refused, without running ssh-keygen, when it is far larger than any signature', async () => {
    const root = await signedStick();
    writeFileSync(join(root, 'mpprov.sha256.sig'), Buffer.alloc(20_000, 0x41));
    expect(
      refusedProblems(await verifyStickSignature(inputFor(root, { sshKeygen: '/nonexistent/ssh-keygen' }))),
    ).toEqual([
      {
        file: 'mpprov.sha256.sig',
        line: 1,
        column: 1,
        message: 'the signature is 20000 bytes; an SSH signature is under 16 KiB',
      },
    ]);
  });
});

describe('a signed list with hostile lines', () => {
  it('is refused line by line, quoting only paths', async () => {
    const lines = [
      `${sha(STICK['mpprov.yaml'])}  mpprov.yaml`,
      `${sha('x')}  ../../etc/shadow`,
      `${sha('x')}  /etc/shadow`,
      `${sha(STICK['secrets/admin.pw'])}  secrets/admin.pw`,
      `${sha(STICK['secrets/admin.pw'])}  ./secrets/admin.pw`,
      `${sha('x').slice(0, 60)}zzzz  certs/device-ca.pem`,
      `${sha(STICK['certs/device-ca.pem'])}  certs/device-ca.pem`,
    ];
    const manifest = Buffer.from(`${lines.join('\n')}\n`);
    const root = freshStick();
    writeStick(root, { 'mpprov.sha256': manifest, 'mpprov.sha256.sig': rig.signBytes(manifest, rig.keys.team) });
    const result = await verifyStickSignature(inputFor(root));
    expect(refusedProblems(result)).toEqual([
      { file: 'mpprov.sha256', line: 2, column: 67, message: "the path leaves the stick through '..'" },
      { file: 'mpprov.sha256', line: 3, column: 67, message: 'the path is absolute' },
      { file: 'mpprov.sha256', line: 5, column: 67, message: "'secrets/admin.pw' is listed twice: lines 4 and 5" },
      {
        file: 'mpprov.sha256',
        line: 6,
        column: 1,
        message: 'the line is not a SHA-256 and a path as sha256sum prints them',
      },
    ]);
  });

  it('lists the first 20 problems of thousands and counts the rest', async () => {
    const manifest = Buffer.from(Array.from({ length: 100 }, (_, i) => `${sha(String(i))}  ../up-${i}`).join('\n'));
    const root = freshStick();
    writeStick(root, { 'mpprov.sha256': manifest, 'mpprov.sha256.sig': rig.signBytes(manifest, rig.keys.team) });
    const problems = refusedProblems(await verifyStickSignature(inputFor(root)));
    // 100 bad lines, then the configuration and its two references are not listed: 103.
    expect(problems).toHaveLength(21);
    expect(problems[20]?.message).toBe('and 83 more problems with the signed list');
  });
});

describe('the laptop side', () => {
  it('refuses when allowed_signers does not exist, naming that file', async () => {
    const missing = join(work, 'no-allowed-signers');
    expect(
      refusedProblems(await verifyStickSignature(inputFor(await signedStick(), { allowedSignersFile: missing }))),
    ).toEqual([{ file: missing, line: 1, column: 1, message: 'the allowed signers file does not exist' }]);
  });

  it('refuses at once when allowed_signers is a FIFO, instead of waiting for a writer', async () => {
    const fifo = join(work, `fifo-${(count += 1)}`);
    execFileSync('mkfifo', [fifo]);
    expect(
      refusedProblems(await verifyStickSignature(inputFor(await signedStick(), { allowedSignersFile: fifo }))),
    ).toEqual([{ file: fifo, line: 1, column: 1, message: 'the allowed signers file is not a regular file' }]);
  });

  it('refuses when ssh-keygen is not installed', async () => {
    const result = await verifyStickSignature(inputFor(await signedStick(), { sshKeygen: '/nonexistent/ssh-keygen' }));
    expect(refusedProblems(result)).toEqual([
      {
        file: 'ssh-keygen',
        line: 1,
        column: 1,
        message: 'the signature could not be checked: ssh-keygen is not installed (package openssh-client)',
      },
    ]);
    expect(result.status === 'refused' && result.problems[0]?.hint).toBe('install openssh-client on this laptop');
  });

  it('refuses, without throwing, when no private temporary folder can be made', async () => {
    const input = inputFor(await signedStick());
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = join(work, 'no-such-tmp');
    try {
      expect(refusedProblems(await verifyStickSignature(input))).toEqual([
        {
          file: 'ssh-keygen',
          line: 1,
          column: 1,
          message: 'the signature could not be checked: no private temporary folder (ENOENT)',
        },
      ]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  it('refuses when ssh-keygen hangs, after its time limit', async () => {
    const hanging = join(work, 'hanging-ssh-keygen');
    writeFileSync(hanging, '#!/bin/sh\nexec sleep 30\n');
    chmodSync(hanging, 0o755);
    const started = Date.now();
    const result = await verifyStickSignature(inputFor(await signedStick(), { sshKeygen: hanging, timeoutMs: 300 }));
    expect(refusedProblems(result)).toEqual([
      {
        file: 'ssh-keygen',
        line: 1,
        column: 1,
        message: 'the signature could not be checked: ssh-keygen did not finish within 0.3 s',
      },
    ]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('refuses when stopped by its AbortSignal', async () => {
    const hanging = join(work, 'hanging-ssh-keygen-2');
    writeFileSync(hanging, '#!/bin/sh\nexec sleep 30\n');
    chmodSync(hanging, 0o755);
    const root = await signedStick();
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 200);
    const result = await verifyStickSignature(inputFor(root, { sshKeygen: hanging, signal: abort.signal }));
    expect(refusedProblems(result).map((p) => p.message)).toEqual([
      'the signature could not be checked: ssh-keygen was stopped',
    ]);
  });

  it('hands ssh-keygen copies in a private folder, never the stick, and removes the folder', async () => {
    // A stand-in that records where its -s file is and that folder's mode, then runs the real tool.
    const record = join(work, 'where.txt');
    const spy = join(work, 'spy-ssh-keygen');
    const real = execFileSync('sh', ['-c', 'command -v ssh-keygen']).toString().trim();
    writeFileSync(
      spy,
      `#!/bin/sh\nfor a in "$@"; do case "$a" in *.sig) d=$(dirname "$a"); echo "$d $(stat -c %a "$d")" >> ${record};; esac; done\nexec ${real} "$@"\n`,
    );
    chmodSync(spy, 0o755);
    const root = await signedStick();
    const result = await verifyStickSignature(inputFor(root, { sshKeygen: spy }));
    expect(result.status).toBe('signed');
    const seen = readFileSync(record, 'utf8').trim().split('\n');
    expect(seen.length).toBeGreaterThanOrEqual(2);
    const folders = new Set(seen.map((line) => line.split(' ')[0] as string));
    expect(folders.size).toBe(1);
    const [folder] = [...folders] as [string];
    expect(folder.startsWith(root)).toBe(false);
    expect(seen.every((line) => line.endsWith(' 700'))).toBe(true);
    expect(() => readFileSync(join(folder, 'mpprov.sha256.sig'))).toThrow(/ENOENT/);
  });
});
