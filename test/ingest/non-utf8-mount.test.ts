import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  findConfigFile,
  joinBytes,
  type MountEntry,
  mountPath,
  parseMountinfo,
  snapshotStick,
  stickLabel,
} from '../../src/ingest/index.js';
import { watchMounts } from '../../src/ingest/mount-watcher.js';
import { makeFatImage, requireFatTools } from '../daemon/fat-stick.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * A stick mounted at a folder whose name is not UTF-8 (a 0xFF byte, as a label in another
 * encoding can give): the mount table holds the name as bytes, and decoding them as UTF-8 turned
 * the byte into U+FFFD, a folder that does not exist ("no mpprov.yaml at its root"). The mount
 * point is kept as bytes for every fs call, and shown with the byte escaped.
 */

const CONFIG =
  'version: 1\nmonitoring_points:\n  - name: mp1\n    url: https://192.0.2.10\n    password_file: admin.pw\n';

describe('a stick at a mount point whose name is not UTF-8', () => {
  let fusefat: ChildProcess | undefined;
  let mountPoint: Buffer | undefined;
  beforeAll(() => requireFatTools());
  afterEach(async () => {
    if (mountPoint !== undefined)
      // spawn's arguments are UTF-8 text: the shell makes the byte (printf '\377').
      spawnSync('sh', [
        '-c',
        'fusermount -u "$(printf "%s/ST\\377ICK" "$1")"',
        'sh',
        mountPoint.subarray(0, -7).toString(),
      ]);
    if (fusefat !== undefined && fusefat.exitCode === null)
      await new Promise<void>((resolve) => fusefat?.once('exit', () => resolve()));
    fusefat = undefined;
    mountPoint = undefined;
  });

  it('the mount table keeps the name as bytes and shows the byte escaped', () => {
    const line = Buffer.concat([
      Buffer.from('40 22 8:17 / /media/tech/MP\\040'),
      Buffer.from([0xff]),
      Buffer.from('STICK rw,nosuid - vfat /dev/sdb1 rw\n'),
    ]);
    const [entry] = parseMountinfo(line);
    expect(entry?.target).toBe('/media/tech/MP \\xffSTICK');
    expect(entry?.targetBytes).toEqual(
      Buffer.concat([Buffer.from('/media/tech/MP '), Buffer.from([0xff]), Buffer.from('STICK')]),
    );
    // A UTF-8 name is as it was: text, no bytes besides.
    const [plain] = parseMountinfo('40 22 8:17 / /media/tech/MP\\040STICK rw - vfat /dev/sdb1 rw\n');
    expect(plain).toEqual({
      target: '/media/tech/MP STICK',
      source: '/dev/sdb1',
      fstype: 'vfat',
      device: '8:17',
      readOnly: false,
    });
  });

  it('a real FAT stick mounted there is seen, found and read', { timeout: 60_000 }, async () => {
    const dir = tempFolder('non-utf8');
    const image = join(dir, 'stick.img');
    await makeFatImage(image, 'STICK', { 'mpprov.yaml': CONFIG, 'admin.pw': 'Non-Utf8-Secret-1\n' });
    const media = join(dir, 'media');
    mkdirSync(media);
    const bytes = Buffer.concat([Buffer.from(`${media}/ST`), Buffer.from([0xff]), Buffer.from('ICK')]);
    mkdirSync(bytes);

    const mounted: MountEntry[] = [];
    const unmounted: MountEntry[] = [];
    const watcher = await watchMounts({
      mediaRoots: [media],
      onMount: (e) => mounted.push(e),
      onUnmount: (e) => unmounted.push(e),
    });
    try {
      const log = openSync(join(dir, 'fusefat.log'), 'a');
      fusefat = spawn(
        'sh',
        ['-c', 'exec fusefat -f -o rw+ "$1" "$(printf "%s/ST\\377ICK" "$2")"', 'sh', image, media],
        {
          stdio: ['ignore', log, log],
        },
      );
      closeSync(log);
      mountPoint = bytes;
      const end = Date.now() + 15_000;
      while (mounted.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect(mounted, readFileSync(join(dir, 'fusefat.log'), 'utf8').slice(-500)).toHaveLength(1);
      const entry = mounted[0]!;
      expect(entry.target).toBe(`${media}/ST\\xffICK`);
      expect(entry.fstype).toBe('fuse.fusefat');
      const root = mountPath(entry);
      expect(root).toEqual(bytes);

      expect(await findConfigFile(root)).toEqual(joinBytes(bytes, 'mpprov.yaml'));
      expect(stickLabel(root)).toBe('ST\\xffICK');
      const snapshot = await snapshotStick(root, 'mpprov.yaml', join(dir, 'copy'));
      expect(snapshot.notes).toEqual([]);
      expect(snapshot.files).toBe(2);
      expect(readFileSync(snapshot.configFile, 'utf8')).toBe(CONFIG);
      // FAT lists names upper-case; the copy has the configuration's own spelling too.
      expect(readFileSync(join(dir, 'copy', 'admin.pw'), 'utf8')).toBe('Non-Utf8-Secret-1\n');

      // Its unmount is seen too, under the same escaped name.
      spawnSync('sh', ['-c', 'fusermount -u "$(printf "%s/ST\\377ICK" "$1")"', 'sh', media]);
      const gone = Date.now() + 10_000;
      while (unmounted.length === 0 && Date.now() < gone) await new Promise((r) => setTimeout(r, 50));
      expect(unmounted.map((e) => e.target)).toEqual([entry.target]);
    } finally {
      await watcher.close();
    }
  });
});
