import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { releaseCommands, releaseStick } from '../../src/agent/release-stick.js';

/**
 * How the agent releases a stick. udisks2 does not run on the test machine, so its commands are
 * checked as built; the FUSE path runs for real in stick-result.test.ts (fusefat sticks).
 */
describe('releasing a stick', () => {
  const tools = { udisksctl: true, fusermount: 'fusermount' };

  it('with udisks2: unmount through it, then power off (which may fail without failing the release)', () => {
    expect(releaseCommands({ target: '/media/tech/MPSTICK', source: '/dev/sdb1', fstype: 'vfat' }, tools)).toEqual([
      { argv: ['udisksctl', 'unmount', '--block-device', '/dev/sdb1', '--no-user-interaction'], optional: false },
      { argv: ['udisksctl', 'power-off', '--block-device', '/dev/sdb1', '--no-user-interaction'], optional: true },
    ]);
  });

  it('without udisks2, or for a source that is no block device: umount of the mount point', () => {
    expect(
      releaseCommands(
        { target: '/media/MP STICK', source: '/dev/sdc1', fstype: 'exfat' },
        { ...tools, udisksctl: false },
      ),
    ).toEqual([{ argv: ['umount', '/media/MP STICK'], optional: false }]);
    expect(releaseCommands({ target: '/mnt/x', source: 'tmpfs', fstype: 'tmpfs' }, tools)).toEqual([
      { argv: ['umount', '/mnt/x'], optional: false },
    ]);
  });

  it('a FUSE mount (fusefat, or a plain fuse type) is released by fusermount -u, udisks2 or not', () => {
    expect(releaseCommands({ target: '/media/STICK', source: 'fusefat', fstype: 'fuse.fusefat' }, tools)).toEqual([
      { argv: ['fusermount', '-u', '/media/STICK'], optional: false },
    ]);
    expect(
      releaseCommands(
        { target: '/media/STICK', source: '/dev/sdb1', fstype: 'fuse' },
        { udisksctl: false, fusermount: 'fusermount3' },
      ),
    ).toEqual([{ argv: ['fusermount3', '-u', '/media/STICK'], optional: false }]);
  });

  it('a root that is not in the mount table is not released, with a sentence', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mpprov-release-'));
    try {
      const table = join(dir, 'mountinfo');
      await writeFile(table, '36 35 98:0 / /media/OTHER rw,noatime master:1 - vfat /dev/sdb1 rw\n');
      expect(await releaseStick('/media/GONE', { mountinfoFile: table })).toEqual({
        released: false,
        why: '/media/GONE is no longer mounted',
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
