import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appendDurably, createUsbLogWriter, replaceDurably } from '../../src/report/index.js';
import { makeFatImage, type MountedStick, mountFat, readFatFile, requireFatTools } from '../daemon/fat-stick.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * fusefat (Debian 0.1a-3), extending a file whose size is an exact multiple of the cluster size
 * (2 KiB on these images) past one cluster, sets its size to the end of a whole new cluster: the
 * rest of that cluster is NUL bytes, and every later append lands after them. A usb.log that grew
 * past 86 016 bytes did that in a soak and ended as 16.7 MB of NULs filling the stick.
 */

const run = promisify(execFile);
let stick: MountedStick | undefined;
beforeAll(() => requireFatTools());
afterEach(async () => {
  await stick?.unmount();
  stick = undefined;
});

async function mounted(files: Record<string, string>): Promise<{ image: string; root: string; device: number }> {
  const dir = tempFolder('fat-boundary');
  const image = join(dir, 'stick.img');
  await makeFatImage(image, 'BOUNDARY', files);
  stick = await mountFat(image, join(dir, 'mnt'), { logFile: join(dir, 'fuse.log') });
  return { image, root: stick.mountPoint, device: (await stat(stick.mountPoint)).dev };
}

describe('appending to usb.log on a fusefat stick', () => {
  it('a file ending exactly on a cluster boundary gets its text right after it, no NUL cluster', async () => {
    const { root, device } = await mounted({ 'mpprov.yaml': 'version: 1\n' });
    const file = join(root, 'usb.log');
    for (const size of [4096, 6144, 10_240, 86_016, 2048 * 60]) {
      const old = Buffer.alloc(size, 'o');
      await replaceDurably(file, old, { device });
      await appendDurably(file, 'one more line\n', { device });
      const got = await readFile(file);
      expect([size, got.length, got.includes(0)]).toEqual([size, size + 14, false]);
      expect(got.subarray(size).toString()).toBe('one more line\n');
    }
  });

  it(
    '2 000 lines through the writer arrive exactly, in order, and the FAT is clean afterwards',
    { timeout: 120_000 },
    async () => {
      const { image, root, device } = await mounted({ 'mpprov.yaml': 'version: 1\n', 'usb.log': 'old line\n' });
      const writer = createUsbLogWriter({ root, device });
      let expected = 'old line\n';
      for (let n = 0; n < 2000; n++) {
        const line = `line ${n} ${'x'.repeat(n % 97)}\n`;
        expected += line;
        writer.append(line);
        // Batches of one and of several lines, as a job writes them.
        if (n % 3 === 0) await writer.flush();
      }
      await writer.flush();
      expect(writer.status().ok).toBe(true);
      await stick?.unmount();
      stick = undefined;
      const log = (await readFatFile(image, 'usb.log')) ?? '';
      expect(log.length).toBe(expected.length);
      expect(log === expected).toBe(true);
      await run('fsck.fat', ['-n', image]);
    },
  );
});
