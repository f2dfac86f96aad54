import { type ChildProcess, spawn } from 'node:child_process';
import { type FSWatcher, readdirSync, readFileSync, readlinkSync, statSync, watch } from 'node:fs';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { mediaMounts, type MountEntry, mountPath, readMountTable, showPathBytes } from './mount-table.js';

/**
 * Follows the mount table as it changes and reports mounts appearing and disappearing under the
 * media roots. `findmnt --poll` (util-linux) wakes us on every change without polling; it is
 * restarted if it dies. Where findmnt is missing, the table is re-read once a second instead.
 *
 * Every change re-reads /proc/self/mountinfo and diffs it against what we knew, so a restart of
 * findmnt, or events it coalesced, never lose a mount. findmnt's own `umount` lines are kept too:
 * a stick pulled and put back at once can come back with the same device number, which the diff
 * alone cannot tell from no change at all.
 * (`--poll -J` aborts on its first event in util-linux 2.38; `-P` works.)
 *
 * findmnt itself diffs source and target: a stick unmounted and mounted again before findmnt
 * gets to read the table (milliseconds on a loaded machine) prints nothing at all, and the mount
 * ID and device number are reused by the kernel. So each mount's root is also watched with
 * inotify: its unmount ends the watch with IN_UNMOUNT, which Node reports as a `rename` named
 * after the watched folder itself, and that counts as an unmount whatever findmnt says.
 * (A bind mount's unmount does not end the watch: its file system stays mounted elsewhere.)
 *
 * The same blindness hides the stick's return: when we read the table between the unmount and
 * the mount again, and findmnt only after both, nobody reports the new mount. So after every
 * unmount the table is read again every 100 ms until the root is back, for up to 10 s.
 */

export interface MountWatcherOptions {
  mediaRoots: readonly string[];
  onMount: (entry: MountEntry) => void;
  onUnmount: (entry: MountEntry) => void;
  /** Something worth a log line: findmnt died, fell back to polling, ... */
  onNotice?: (message: string) => void;
  /** Default `findmnt`; tests point it at a missing program to exercise the fallback. */
  findmntCommand?: string;
  /** Fallback re-read interval; default 1000 ms. */
  pollIntervalMs?: number;
  /** Mount table file; default /proc/self/mountinfo. */
  mountinfoFile?: string;
}

export interface MountWatcher {
  /** Mounts under the media roots right now (as last read). */
  current(): MountEntry[];
  /** 'findmnt' while findmnt --poll runs, 'polling' in the fallback. */
  mode(): 'findmnt' | 'polling';
  close(): Promise<void>;
}

const RESTART_DELAYS_MS = [200, 1_000, 5_000, 30_000] as const;
/** How often, and how far apart, a root whose unmount was signalled is looked at again. */
const ROOT_RECHECKS = 10;
const ROOT_RECHECK_MS = 50;
/** After an unmount, how often and how long the table is read again for the root's return. */
const RETURN_POLL_MS = 100;
const RETURN_WATCH_MS = 10_000;

interface RootWatch {
  watcher: FSWatcher;
  /** The root's inode when the watch was set: the kernel's watch list names it this way. */
  dev: number;
  /** The same device as the mount table writes it (`major:minor`). */
  device: string;
  ino: number;
  recheck?: NodeJS.Timeout;
}

/**
 * Starts watching. Mounts already present are reported by `current()`, not as events: whether
 * a stick that was in before the agent started counts is the caller's decision.
 */
export async function watchMounts(options: MountWatcherOptions): Promise<MountWatcher> {
  const roots = [...options.mediaRoots];
  const readTable = (): Promise<MountEntry[]> => readMountTable(options.mountinfoFile);
  let known = mediaMounts(await readTable(), roots);
  let closed = false;
  let mode: 'findmnt' | 'polling' = 'findmnt';
  let child: ChildProcess | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let failures = 0;

  // Re-reads are serialised and coalesced: a burst of findmnt lines costs one or two reads.
  let rescanning: Promise<void> | undefined;
  let rescanAgain = false;
  /**
   * Targets seen unmounted (findmnt, a root watch) since the last read: gone, whatever the table
   * says now. With the device of the mount that went, when known (a root watch knows it): a read
   * already under way may have seen the stick back and counted that unmount by its new device.
   */
  const unmounted = new Map<string, string | undefined>();
  /** Those the read under way was started for. */
  let counting = new Set<string>();
  const rootWatches = new Map<string, RootWatch>();
  /** Roots unmounted lately, until when their return is looked for. */
  const awaitingReturn = new Map<string, number>();
  let returnTimer: NodeJS.Timeout | undefined;
  const awaitReturn = (target: string): void => {
    awaitingReturn.set(target, Date.now() + RETURN_WATCH_MS);
    if (returnTimer !== undefined) return;
    returnTimer = setInterval(() => {
      const now = Date.now();
      for (const [root, until] of awaitingReturn) if (until <= now) awaitingReturn.delete(root);
      if (awaitingReturn.size > 0) rescan();
      else {
        clearInterval(returnTimer);
        returnTimer = undefined;
      }
    }, RETURN_POLL_MS);
    returnTimer.unref();
  };
  const unwatchRoot = (target: string): void => {
    const rootWatch = rootWatches.get(target);
    if (rootWatch === undefined) return;
    clearTimeout(rootWatch.recheck);
    rootWatch.watcher.close();
    rootWatches.delete(target);
  };
  /**
   * The root counts as unmounted once the kernel has dropped our watch on it. The IN_UNMOUNT event
   * can be read a moment before the kernel removes the watch (another core, a loaded machine), so
   * a watch still present is looked at again shortly.
   */
  const checkRoot = (target: string, rootWatch: RootWatch, retries: number): void => {
    if (closed || rootWatches.get(target) !== rootWatch) return;
    const exists = inotifyWatchExists(rootWatch.dev, rootWatch.ino);
    if (exists === false) {
      unwatchRoot(target);
      unmounted.set(target, rootWatch.device);
      rescan();
    } else if (retries > 0) {
      clearTimeout(rootWatch.recheck);
      rootWatch.recheck = setTimeout(() => checkRoot(target, rootWatch, retries - 1), ROOT_RECHECK_MS);
      rootWatch.recheck.unref();
    }
  };
  /**
   * Watches the root of the file system mounted at `target`; 'not-mounted' when nothing is mounted
   * there any more (the table read that named it is already old), so the underlying folder, which
   * would never report the stick's unmount, is not watched instead.
   */
  const watchRoot = (mount: MountEntry): 'watched' | 'not-mounted' | 'unwatchable' => {
    const target = mount.target;
    unwatchRoot(target);
    // As bytes: a mount point whose name is not UTF-8 is watched at its real name (mountPath).
    const path = Buffer.from(mountPath(mount));
    const cut = path.lastIndexOf(0x2f);
    const name = path.subarray(cut + 1);
    const parent = cut <= 0 ? Buffer.from('/') : path.subarray(0, cut);
    // A stick folder named like a file the agent writes at a stick's root would look unmounted
    // at every write: such a mount is left to findmnt alone.
    if (/^(usb\.log|mpprov)/i.test(basename(target))) return 'unwatchable';
    try {
      const root = statSync(path);
      if (root.dev === statSync(parent).dev) return 'not-mounted';
      const entry: RootWatch = {
        dev: root.dev,
        device: deviceName(root.dev),
        ino: root.ino,
        watcher: watch(path, { persistent: false, encoding: 'buffer' }, (event, file) => {
          if (event !== 'rename' || (file !== null && !file.equals(name))) return;
          // The same event names a child called like the folder (a FAT label shows as one): only a
          // watch the kernel has dropped means the root was unmounted.
          checkRoot(target, entry, ROOT_RECHECKS);
        }),
      };
      entry.watcher.on('error', () => unwatchRoot(target));
      rootWatches.set(target, entry);
      return 'watched';
    } catch (error) {
      // Gone already, or no inotify left (then findmnt still reports it).
      return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not-mounted' : 'unwatchable';
    }
  };
  const rescan = (): void => {
    if (closed) return;
    if (rescanning !== undefined) {
      rescanAgain = true;
      return;
    }
    rescanning = (async () => {
      /** Roots found not mounted after a read that named them: read again, once each. */
      const reread = new Set<string>();
      do {
        rescanAgain = false;
        // Only unmounts known before this read apply to it: one signalled while the table is
        // being read may be newer than what the read sees, and waits for the next read.
        const gone = [...unmounted];
        unmounted.clear();
        counting = new Set(gone.map(([target]) => target));
        let now: Map<string, MountEntry>;
        try {
          now = mediaMounts(await readTable(), roots);
        } catch (error) {
          for (const [target, device] of gone) unmounted.set(target, device);
          counting = new Set();
          options.onNotice?.(`cannot read the mount table: ${(error as Error).message}`);
          return;
        }
        const before = new Map(known);
        known = now;
        for (const [target, device] of gone) {
          const entry = before.get(target);
          // The mount that went is not the one known now: an earlier read saw the stick back (a new
          // device) and counted its unmount and return already.
          if (entry !== undefined && device !== undefined && entry.device !== device) continue;
          if (entry !== undefined) {
            options.onUnmount(entry);
            awaitReturn(target);
          }
          before.delete(target);
          unwatchRoot(target);
        }
        for (const [target, entry] of before) {
          const after = now.get(target);
          if (after === undefined || after.device !== entry.device) {
            unwatchRoot(target);
            options.onUnmount(entry);
            awaitReturn(target);
          }
        }
        for (const [target, entry] of now) {
          awaitingReturn.delete(target);
          const previous = before.get(target);
          const isNew = previous === undefined || previous.device !== entry.device;
          if (isNew) unwatchRoot(target);
          // Every root is watched, also one whose watch was dropped while this read was under way.
          if (!rootWatches.has(target) && watchRoot(entry) === 'not-mounted' && !reread.has(target)) {
            reread.add(target);
            rescanAgain = true;
          }
          if (isNew) options.onMount(entry);
        }
        counting = new Set();
      } while (rescanAgain && !closed);
    })().finally(() => {
      rescanning = undefined;
    });
  };

  const startPolling = (): void => {
    mode = 'polling';
    const interval = options.pollIntervalMs ?? 1_000;
    pollTimer = setInterval(rescan, interval);
  };

  /** Resolves once findmnt runs, or the fallback has taken over. */
  const startFindmnt = (): Promise<void> => {
    if (closed) return Promise.resolve();
    const command = options.findmntCommand ?? 'findmnt';
    const proc = spawn(command, ['--poll', '-P', '-o', 'ACTION,TARGET,OLD-TARGET'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    child = proc;
    let spawned = false;
    proc.once('spawn', () => {
      spawned = true;
      // Closes the gap between our first read and findmnt's: anything mounted meanwhile shows up.
      rescan();
    });
    createInterface({ input: proc.stdout }).on('line', (line) => {
      failures = 0;
      const event = parseFindmntLine(line);
      if (event.ACTION === 'umount' || event.ACTION === 'move') {
        // A watched root reports its own unmount, once: counting findmnt's line too would make one
        // unmount two when the watch spoke first and the stick is already back. So would a root
        // whose watch spoke and whose unmount the read under way already counts.
        for (const target of new Set([event.TARGET, event['OLD-TARGET']])) {
          if (target === undefined || target === '') continue;
          const watched = rootWatches.get(target);
          if (watched !== undefined) checkRoot(target, watched, ROOT_RECHECKS);
          else if (!counting.has(target) && !unmounted.has(target)) unmounted.set(target, undefined);
        }
      }
      rescan();
    });
    proc.once('error', (error: NodeJS.ErrnoException) => {
      if (!spawned) {
        // Missing (ENOENT) or not runnable: either way the mount table is read on a timer instead.
        child = undefined;
        const why = error.code === 'ENOENT' ? 'is not installed' : `cannot be started (${error.code ?? error.message})`;
        options.onNotice?.(
          `${command} ${why}: re-reading ${options.mountinfoFile ?? '/proc/self/mountinfo'} every ${options.pollIntervalMs ?? 1000} ms instead`,
        );
        startPolling();
      } else {
        options.onNotice?.(`${command} --poll failed: ${error.message}`);
      }
    });
    proc.once('exit', (code, signal) => {
      if (child === proc) child = undefined;
      if (closed || mode === 'polling' || !spawned) return;
      const delay = RESTART_DELAYS_MS[Math.min(failures, RESTART_DELAYS_MS.length - 1)] ?? 30_000;
      failures += 1;
      options.onNotice?.(`${command} --poll exited (${signal ?? `status ${code}`}); restarting it in ${delay} ms`);
      restartTimer = setTimeout(() => {
        restartTimer = undefined;
        void startFindmnt();
      }, delay);
    });
    return new Promise<void>((resolve) => {
      proc.once('spawn', () => resolve());
      proc.once('error', () => resolve());
    });
  };

  for (const entry of known.values()) watchRoot(entry);
  await startFindmnt();

  return {
    current: () => [...known.values()],
    mode: () => mode,
    async close() {
      closed = true;
      for (const target of [...rootWatches.keys()]) unwatchRoot(target);
      if (restartTimer !== undefined) clearTimeout(restartTimer);
      clearInterval(returnTimer);
      if (pollTimer !== undefined) clearInterval(pollTimer);
      const proc = child;
      child = undefined;
      if (proc !== undefined && proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
        proc.kill('SIGTERM');
        await exited;
      }
      await rescanning;
    },
  };
}

/**
 * Whether this process holds an inotify watch on the inode (dev, ino), from /proc/self/fdinfo of
 * its inotify descriptors (the kernel drops a watch when its file system is unmounted).
 * `undefined` when that cannot be read.
 */
/** stat's device number (glibc's encoding) as its major and minor numbers. */
function majorMinor(dev: number): { major: number; minor: number } {
  return { major: Math.floor(dev / 256) & 0xfff, minor: (dev & 0xff) | (Math.floor(dev / 4096) & 0xfff00) };
}

function deviceName(dev: number): string {
  const { major, minor } = majorMinor(dev);
  return `${major}:${minor}`;
}

function inotifyWatchExists(dev: number, ino: number): boolean | undefined {
  // fdinfo shows the kernel's dev_t (major << 20 | minor); stat's is the user-space encoding.
  const { major, minor } = majorMinor(dev);
  const wanted = ` ino:${ino.toString(16)} sdev:${(major * 2 ** 20 + minor).toString(16)} `;
  let found: boolean | undefined;
  try {
    for (const fd of readdirSync('/proc/self/fd')) {
      let link: string;
      try {
        link = readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        continue;
      }
      if (link !== 'anon_inode:inotify') continue;
      found ??= false;
      if (readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').includes(wanted)) return true;
    }
  } catch {
    return undefined;
  }
  return found;
}

/**
 * `ACTION="umount" TARGET="/media/x\x20y"` (findmnt -P: hex escapes) to its fields. An escape is
 * a byte: the value is decoded as bytes and shown as the mount table shows it (mount-table.ts),
 * so a name that is not UTF-8 matches the target read from mountinfo.
 */
export function parseFindmntLine(line: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of line.matchAll(/([A-Z:-]+)="((?:[^"\\]|\\.)*)"/g)) {
    const parts = (match[2] ?? '')
      .split(/(\\x[0-9a-fA-F]{2})/)
      .map((part) =>
        /^\\x[0-9a-fA-F]{2}$/.test(part) ? Buffer.from([Number.parseInt(part.slice(2), 16)]) : Buffer.from(part),
      );
    fields[match[1] ?? ''] = showPathBytes(Buffer.concat(parts));
  }
  return fields;
}
