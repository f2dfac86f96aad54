import { execFile, execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { watchMounts, type MountWatcher } from '../../src/ingest/mount-watcher.js';

/**
 * A stick unmounted and mounted again within milliseconds, with real tmpfs mounts and the real
 * findmnt. findmnt diffs source and target, and the kernel hands the new mount the old one's ID
 * and device number, so when findmnt reads the table only after both (a loaded machine; here it
 * is stopped with SIGSTOP to make that certain) it prints nothing: the root's inotify watch must
 * still report exactly one unmount and one mount per insertion. The rounds alternate between the
 * watcher's process blocked across both changes (as a loaded machine would hold it) and the
 * watcher running meanwhile: then it can read the table between the unmount and the mount, and
 * with findmnt held nobody reports the stick's return but the watcher's own looking again.
 */

let dir: string | undefined;
let watcher: MountWatcher | undefined;
afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  if (dir !== undefined) {
    execFileSync('sh', ['-c', `umount -l ${join(dir, 'media', 'MPSTICK')} 2>/dev/null; true`]);
    await rm(dir, { recursive: true, force: true });
  }
  dir = undefined;
});

const until = async (what: string, check: () => boolean, ms = 10_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('a stick mounted again within milliseconds of its unmount', () => {
  it(
    'is one unmount and one mount every time, even when findmnt reads the table only after both',
    { timeout: 180_000 },
    async () => {
      dir = await mkdtemp(join(tmpdir(), 'mpprov-remount-'));
      const media = join(dir, 'media');
      const target = join(media, 'MPSTICK');
      await mkdir(target, { recursive: true });
      const events: string[] = [];
      watcher = await watchMounts({
        mediaRoots: [media],
        onMount: (e) => events.push(`+${e.target}`),
        onUnmount: (e) => events.push(`-${e.target}`),
      });
      expect(watcher.mode()).toBe('findmnt');
      const findmnt = execFileSync('pgrep', ['-P', String(process.pid), '-x', 'findmnt'], { encoding: 'utf8' }).trim();
      expect(findmnt).toMatch(/^\d+$/);
      const mount = `mount -t tmpfs -o size=64k mpstick ${target}`;
      execFileSync('sh', ['-c', mount]);
      await until('the first mount', () => events.length === 1);

      const rounds = 200;
      const run = promisify(execFile);
      for (let round = 0; round < rounds; round++) {
        // Every other round findmnt is held still across the unmount and the mount; in every other
        // pair of rounds this process is too (a synchronous child), else it goes on meanwhile.
        const hold = round % 2 === 0;
        const script = hold
          ? `kill -STOP ${findmnt}; umount ${target} && ${mount}; s=$?; kill -CONT ${findmnt}; exit $s`
          : `umount ${target} && ${mount}`;
        if (round % 4 < 2) execFileSync('sh', ['-c', script]);
        else await run('sh', ['-c', script]);
        await until(`round ${round}`, () => events.length >= 1 + 2 * (round + 1));
        expect(events.length, `events after round ${round}: one unmount and one mount each`).toBe(1 + 2 * (round + 1));
      }
      // Nothing late or doubled arrives after the last round.
      await new Promise((r) => setTimeout(r, 300));
      const expected = ['+', ...Array.from({ length: rounds }, () => ['-', '+']).flat()].map(
        (sign) => `${sign}${target}`,
      );
      expect(events).toEqual(expected);
    },
  );
});
