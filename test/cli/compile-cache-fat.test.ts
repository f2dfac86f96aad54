import { execFile } from 'node:child_process';
import { openSync, readFileSync, readdirSync, statSync, utimesSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { FULL_APP } from '../../src/cli/bundle-files.js';
import { makeFatImage, mountFat, requireFatTools, type MountedStick } from '../daemon/fat-stick.js';
import { repoRoot } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * The code cache is named by the bundle file's device, inode, size and times (compile-cache.ts),
 * which vouch for its content only where the file system keeps a change time the kernel sets. FAT
 * keeps none (the change time read is the modification time, in whole seconds) and numbers its
 * inodes by place: a bundle on a stick edited in place, its time put back, looks the same. Real
 * FAT, through fusefat, and the real launcher.
 */

const run = promisify(execFile);
const dist = join(repoRoot, 'dist');
let stick: MountedStick | undefined;

afterEach(async () => {
  await stick?.unmount().catch(() => undefined);
  stick = undefined;
});

async function version(launcher: string, cache: string): Promise<{ said: string; stdout: string }> {
  const { stdout, stderr } = await run(process.execPath, [launcher, '--version'], {
    env: { ...process.env, NO_COLOR: '1', MPPROV_COMPILE_CACHE: cache, MPPROV_COMPILE_CACHE_DEBUG: '1' },
    encoding: 'utf8',
  });
  return { said: /^mpprov: compile cache (\w+)/m.exec(stderr)?.[1] ?? `nothing said: ${stderr}`, stdout };
}

describe('the code cache of a bundle on FAT', () => {
  it('is not taken for a bundle edited in place with its time put back', async () => {
    requireFatTools();
    const folder = tempFolder('compile-cache-fat');
    const image = join(folder, 'stick.img');
    await makeFatImage(
      image,
      'MPPROV',
      {
        'mpprov.cjs': readFileSync(join(dist, 'mpprov.cjs')),
        [FULL_APP]: readFileSync(join(dist, FULL_APP)),
      },
      16,
    );
    stick = await mountFat(image, join(folder, 'mnt'), { logFile: join(folder, 'fusefat.log') });
    const launcher = join(stick.mountPoint, 'mpprov.cjs');
    const app = join(stick.mountPoint, FULL_APP);
    const cache = join(folder, 'cache');

    const first = await version(launcher, cache);
    expect(first.said).toBe('miss');
    expect(await version(launcher, cache)).toEqual({ said: 'hit', stdout: first.stdout });

    // The version's last digit, changed in place: the same size, the same inode.
    const bytes = readFileSync(app);
    const shown = first.stdout.trim();
    const at = bytes.indexOf(`return"${shown}"`);
    expect(at).toBeGreaterThan(0);
    const edited = `${shown.slice(0, -1)}${shown.endsWith('9') ? '8' : '9'}`;
    const before = statSync(app);
    const fd = openSync(app, 'r+');
    try {
      writeSync(fd, edited, at + 'return"'.length, 'latin1');
    } finally {
      closeSync(fd);
    }
    utimesSync(app, before.atime, before.mtime);
    expect(statSync(app, { bigint: true }).mtimeNs).toBe(statSync(app, { bigint: true }).ctimeNs);

    const after = await version(launcher, cache);
    expect(after).toEqual({ said: 'miss', stdout: `${edited}\n` });
    expect(readdirSync(cache).filter((name) => name.endsWith('.v8cache'))).toHaveLength(1);
    expect(await version(launcher, cache)).toEqual({ said: 'hit', stdout: `${edited}\n` });
  });
});
