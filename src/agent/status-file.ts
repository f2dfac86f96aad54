import { constants } from 'node:fs';
import { chmod, lstat, open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { StatusSource } from '../status-page/index.js';
import { makeFolder } from '../core/make-folder.js';

/**
 * status.json in the agent's runtime directory: the status contract's file, read by `mpprov
 * notify` as the desktop user. It holds no secret (the board redacts every text), so it is
 * 0644 in a 0755 directory. Written as status.json.tmp renamed into place, at most every 250 ms
 * while things change, and at once when a job ends or the agent stops.
 *
 * The agent runs as root and the folder may be /run/mpprov made by anyone before it (no systemd):
 * a folder that is a link, is not the agent's own or is writable by others is refused, and the
 * temporary file is made new (O_EXCL|O_NOFOLLOW), so no planted link makes root write elsewhere.
 */

const STATUS_FILE_NAME = 'status.json';
const STATUS_WRITE_INTERVAL_MS = 250;
const DEFAULT_RUNTIME_DIR = '/run/mpprov';

/** systemd's RuntimeDirectory= (its first path, when it names several), else /run/mpprov. */
export function runtimeDirectory(env: NodeJS.ProcessEnv): string {
  const first = (env.RUNTIME_DIRECTORY ?? '').split(':')[0] ?? '';
  return first === '' ? DEFAULT_RUNTIME_DIR : first;
}

export interface StatusFile {
  readonly path: string;
  /** Writes the last state (the board marked stopped) and stops following the board. */
  close(): Promise<void>;
}

export function startStatusFile(options: {
  dir: string;
  source: StatusSource;
  /** Said once, when the file cannot be written: the agent goes on without it. */
  onProblem: (message: string) => void;
  intervalMs?: number;
}): StatusFile {
  const interval = options.intervalMs ?? STATUS_WRITE_INTERVAL_MS;
  const path = join(options.dir, STATUS_FILE_NAME);
  const tmp = `${path}.tmp`;
  let timer: NodeJS.Timeout | undefined;
  let lastWrite = 0;
  let writing: Promise<void> = Promise.resolve();
  let failed = false;

  const write = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    lastWrite = Date.now();
    // One write at a time, each with the newest snapshot: they share the temporary file.
    writing = writing.then(async () => {
      try {
        // A folder made here is made readable (the umask would narrow it); one systemd made keeps its mode.
        const made = await makeFolder(options.dir, 0o755);
        if (made !== undefined) await chmod(options.dir, 0o755);
        await checkRuntimeDirectory(options.dir);
        // A leftover from a killed agent, or something planted: removed, never followed.
        await unlink(tmp).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        });
        const handle = await open(
          tmp,
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
          0o644,
        );
        try {
          await handle.writeFile(`${JSON.stringify(options.source.snapshot())}\n`);
          // The service's UMask=0077 would leave it 0600: the desktop user must read it.
          await handle.chmod(0o644);
        } finally {
          await handle.close();
        }
        await rename(tmp, path);
        if (failed) options.onProblem(`the status file ${path} is written again`);
        failed = false;
      } catch (error) {
        const why =
          error instanceof UnsafeRuntimeDirectory
            ? error.message
            : ((error as NodeJS.ErrnoException).code ?? (error as Error).message);
        if (!failed) options.onProblem(`cannot write the status file ${path} (${why}); the agent goes on without it`);
        failed = true;
      }
    });
    return writing;
  };

  const unsubscribe = options.source.subscribe(({ ended }) => {
    if (ended) {
      void write();
      return;
    }
    if (timer !== undefined) return;
    timer = setTimeout(() => void write(), Math.max(0, lastWrite + interval - Date.now()));
  });
  void write();

  return {
    path,
    async close() {
      unsubscribe();
      await write();
    },
  };
}

class UnsafeRuntimeDirectory extends Error {}

/** The folder must be a real folder of the agent's own user that no one else may write to. */
async function checkRuntimeDirectory(dir: string): Promise<void> {
  const info = await lstat(dir);
  if (info.isSymbolicLink()) throw new UnsafeRuntimeDirectory(`${dir} is a symbolic link, not a folder`);
  if (!info.isDirectory()) throw new UnsafeRuntimeDirectory(`${dir} is not a folder`);
  const uid = process.geteuid?.();
  if (uid !== undefined && info.uid !== uid)
    throw new UnsafeRuntimeDirectory(`${dir} belongs to user ${info.uid}, not to the agent's user ${uid}`);
  if ((info.mode & 0o022) !== 0)
    throw new UnsafeRuntimeDirectory(`${dir} is writable by other users (mode ${(info.mode & 0o777).toString(8)})`);
}
