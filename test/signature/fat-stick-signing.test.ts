import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyStickSignature } from '../../src/signature/index.js';
import { listFat, makeFatImage, mountFat, readFatFile, requireFatTools } from '../daemon/fat-stick.js';
import { runCli, repoRoot } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';
import { useSigningRig } from './signing-rig.js';

/**
 * `mpprov sign` onto a real FAT stick (fusefat), twice: the second signing replaces both files
 * (never a truncating overwrite, which breaks fusefat's cluster chains), and what lands on the
 * image, read back with mtools after unmounting, verifies.
 */
const REFERENCED = [
  'secrets/admin.pw',
  'certs/device-ca.pem',
  'certs/radius-ca.pem',
  'certs/mp01-cert.pem',
  'certs/mp01-key.pem',
];

const rig = useSigningRig();
const work = tempFolder('sign-fat');

beforeAll(() => requireFatTools());

describe('mpprov sign on a FAT stick', () => {
  it('writes both files, replaces them on a second signing, and the image verifies', async () => {
    const image = join(work, 'stick.img');
    const files: Record<string, Buffer> = { 'mpprov.yaml': readFileSync(`${repoRoot}profiles/eap-tls-pem.yaml`) };
    for (const path of REFERENCED) files[path] = readFileSync(`${repoRoot}profiles/${path}`);
    files['notes.txt'] = Buffer.from('signed twice\n');
    await makeFatImage(image, 'SIGNED', files);
    const stick = await mountFat(image, join(work, 'mnt'), { logFile: join(work, 'fusefat.log') });
    try {
      // The first signing writes longer files (an RSA signature, one more line) than the second:
      // a truncating overwrite would leave their old size behind on fusefat.
      expect((await runCli(['sign', stick.mountPoint, '--key', rig.keys.ops, '--include', 'notes.txt'])).code).toBe(0);
      const second = await runCli(['sign', stick.mountPoint, '--key', rig.keys.team]);
      expect(second.stdout).toContain(`${stick.mountPoint}: signed with ED25519 key`);
      expect(second.code).toBe(0);
    } finally {
      await stick.unmount();
    }

    const read = async (path: string): Promise<Buffer> => {
      const text = await readFatFile(image, path);
      expect(text, `${path} on the image`).toBeDefined();
      return Buffer.from(text as string, 'utf8');
    };
    const filesByPath = new Map<string, Buffer>([['mpprov.yaml', await read('mpprov.yaml')]]);
    for (const path of REFERENCED) filesByPath.set(path, await read(path));
    const result = await verifyStickSignature({
      manifestBytes: await read('mpprov.sha256'),
      signatureBytes: await read('mpprov.sha256.sig'),
      allowedSignersFile: rig.allowedSigners,
      filesByPath,
      configName: 'mpprov.yaml',
      referencedPaths: REFERENCED,
    });
    expect(result).toMatchObject({ status: 'signed', principal: 'team@example.com' });
    // No temporary file left behind in the stick's root.
    expect(await listFat(image)).not.toMatch(/\.tmp/i);
  });
});
