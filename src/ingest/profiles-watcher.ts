import type { Stats } from 'node:fs';
import { basename, extname } from 'node:path';
import { watch } from 'chokidar';

/**
 * Watches the agent's profiles folders: a new or changed `*.yaml` (or `*.yml`) directly in one
 * becomes a job once its writes have settled (an editor or `cp` writes in pieces). Files already
 * there when the watch starts are reported by `ready` rather than as new, so the caller can decide.
 * chokidar sits on inotify: an idle watch costs nothing.
 */

/** What a profile file looked like once its writes settled: any write since changes one of these. */
export interface SettledFile {
  ino: number;
  size: number;
  mtimeMs: number;
}

export interface ProfilesWatcherOptions {
  dirs: readonly string[];
  onProfile: (file: string, settled?: SettledFile) => void;
  onNotice?: (message: string) => void;
  /** How long a file must stay unchanged before it counts as written; default 300 ms. */
  settleMs?: number;
}

export interface ProfilesWatcher {
  close(): Promise<void>;
}

function isProfileName(file: string): boolean {
  const name = basename(file);
  return !name.startsWith('.') && ['.yaml', '.yml'].includes(extname(name).toLowerCase());
}

export async function watchProfiles(options: ProfilesWatcherOptions): Promise<ProfilesWatcher> {
  if (options.dirs.length === 0) return { close: () => Promise.resolve() };
  const settle = options.settleMs ?? 300;
  const watcher = watch([...options.dirs], {
    ignoreInitial: true,
    depth: 0,
    awaitWriteFinish: { stabilityThreshold: settle, pollInterval: Math.max(50, Math.round(settle / 3)) },
    // Folders pass (the watched roots themselves); files only when they look like a profile.
    ignored: (path, stats) => stats !== undefined && stats.isFile() && !isProfileName(path),
  });
  // With awaitWriteFinish, the stats chokidar passes are the last ones it polled: the settled file.
  const report = (path: string, stats?: Stats): void => {
    if (isProfileName(path))
      options.onProfile(
        path,
        stats === undefined ? undefined : { ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs },
      );
  };
  watcher.on('add', report);
  watcher.on('change', report);
  watcher.on('error', (error) =>
    options.onNotice?.(`watching the profiles folders failed: ${(error as Error).message}`),
  );
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return { close: () => watcher.close() };
}
