import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isCaseInsensitiveMount, mountOf, parseMountinfo, snapshotStick } from '../../src/ingest/index.js';
import { readReferencedFile } from '../../src/ingest/stick-files.js';
import { makeFatImage, type MountedStick, mountFat, requireFatTools } from '../daemon/fat-stick.js';

/**
 * A stick written on Windows lists MPPROV.YAML and CERTS/RADIUS-CA.PEM: it must work exactly like
 * a lower-case one. Whether names ignore case is decided by the filesystem type in the mount table.
 * Real FAT images, names put in by mtools in upper and mixed case, mounted through fusefat.
 */

const MOUNTINFO = [
  '22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw',
  '40 22 8:17 / /media/tech/MPSTICK rw,nosuid - vfat /dev/sdb1 rw',
  '41 22 8:33 / /media/tech/EXSTICK rw,nosuid - exfat /dev/sdc1 rw',
  '42 22 0:50 / /media/tech/FUSE rw,nosuid - fuse.fusefat fusefat rw',
  '43 22 8:49 / /media/tech/NTFS rw,nosuid - fuseblk /dev/sdd1 rw',
  '44 22 8:65 / /media/tech/EXT rw,nosuid - ext4 /dev/sde1 rw',
].join('\n');

describe('FAT spellings', () => {
  let dirs: string[] = [];
  let sticks: MountedStick[] = [];
  beforeAll(() => requireFatTools());
  afterEach(async () => {
    for (const stick of sticks) await stick.unmount().catch(() => undefined);
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    dirs = [];
    sticks = [];
  });
  const tempDir = async (): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), 'mpprov-case-'));
    dirs.push(dir);
    return dir;
  };

  it('the mount table decides: vfat, exFAT and fusefat ignore case; ext4 and fuseblk (ntfs-3g) do not', async () => {
    const entries = parseMountinfo(MOUNTINFO);
    expect(mountOf('/media/tech/MPSTICK/certs/ca.pem', entries)?.fstype).toBe('vfat');
    expect(mountOf('/media/tech/MPSTICKX', entries)?.fstype).toBe('ext4');
    const table = join(await tempDir(), 'mountinfo');
    await writeFile(table, MOUNTINFO);
    const decided = await Promise.all(
      ['MPSTICK', 'EXSTICK', 'FUSE', 'NTFS', 'EXT'].map((l) => isCaseInsensitiveMount(`/media/tech/${l}`, table)),
    );
    expect(decided).toEqual([true, true, true, false, false]);
  });

  it(
    'an upper-case stick: the configuration copied once, every file it names found under its own spelling',
    { timeout: 30_000 },
    async () => {
      const dir = await tempDir();
      const config = 'version: 1\nx: [certs/radius-ca.pem, secrets/admin.pw, "./Mixed/Client-Key.Pem"]\n';
      const image = join(dir, 'upper.img');
      await makeFatImage(image, 'UPPER', {
        'MPPROV.YAML': config,
        'CERTS/RADIUS-CA.PEM': 'CA PEM\n',
        'SECRETS/ADMIN.PW': 'pw\n',
        'MIXED/client-KEY.pem': 'KEY\n',
      });
      const root = join(dir, 'mnt');
      sticks.push(await mountFat(image, root, { logFile: join(dir, 'fusefat.log') }));
      // What fusefat lists: upper case, as Windows wrote it.
      expect((await readdir(root)).filter((n) => n !== 'UPPER').sort()).toEqual([
        'CERTS',
        'MIXED',
        'MPPROV.YAML',
        'SECRETS',
      ]);
      expect(await isCaseInsensitiveMount(root)).toBe(true);

      const copy = join(dir, 'copy');
      const snapshot = await snapshotStick(root, 'mpprov.yaml', copy);
      expect(await readFile(snapshot.configFile, 'utf8')).toBe(config);
      // Once: the listed MPPROV.YAML is the configuration itself, not another file.
      expect((await readdir(copy)).filter((n) => n.toLowerCase() === 'mpprov.yaml')).toEqual(['mpprov.yaml']);
      expect(snapshot.files).toBe(4); // the configuration and the three files it names (nothing unmentioned, not the volume label's entry)
      for (const [path, content] of [
        ['certs/radius-ca.pem', 'CA PEM\n'],
        ['secrets/admin.pw', 'pw\n'],
        ['./Mixed/Client-Key.Pem', 'KEY\n'],
      ] as const) {
        const read = await readReferencedFile(copy, path);
        expect(read, path).toMatchObject({ ok: true });
        expect(read.ok && read.bytes.toString('utf8'), path).toBe(content);
      }
    },
  );

  it('on a case-sensitive disk the other spelling is another name: not found, and nothing linked', async () => {
    const root = await tempDir();
    await writeFile(join(root, 'mpprov.yaml'), 'x: [certs/ca.pem]\n');
    await mkdir(join(root, 'CERTS'));
    await writeFile(join(root, 'CERTS', 'CA.PEM'), 'PEM\n');
    expect(await isCaseInsensitiveMount(root)).toBe(false);
    const copy = join(await tempDir(), 'copy');
    await snapshotStick(root, 'mpprov.yaml', copy);
    expect(await readReferencedFile(copy, 'certs/ca.pem')).toMatchObject({
      ok: false,
      message: "file 'certs/ca.pem' does not exist",
    });
  });
});
