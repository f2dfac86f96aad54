import { spawn } from 'node:child_process';
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { makeFolderSync } from '../core/make-folder.js';
import { processAlive } from '../core/process-alive.js';

/**
 * One agent per state folder: two `mpprov run` on one state folder took every stick twice (two
 * jobs, two POSTs, restarts on top of restarts). The lock is flock(2) on `agent.lock` inside the
 * folder, held through an open file description the agent keeps for its whole life:
 * - the kernel drops it the moment its holder dies however it dies, so a SIGKILLed agent never
 *   blocks the next start, and there is no stale file to take over: two starters racing after a
 *   crash are decided by the kernel, with no window to close by waiting and checking again;
 * - it is the file, not a name: every spelling of the path (a link, a bind mount) and every
 *   network namespace meet at the same inode;
 * - no other user can take it: flock needs an open file, and the folder is the agent's user's
 *   alone (checked, never assumed), the file 0600 and its own (checked: a descriptor another user
 *   opened while the file was readable would survive any chmod, so such a file is refused).
 * An abstract socket named after the file was given up: every local user can read its name in
 * /proc/net/unix and bind it once the agent stops, so the agent refused to start for good. A
 * socket file in the folder goes stale on SIGKILL, and removing a stale one races another starter.
 *
 * Node has no flock, so `flock` (util-linux, already a dependency for findmnt) takes it on the
 * agent's descriptor, passed as its fd 3: the lock belongs to the open file description the two
 * share, so it outlives that child and lasts until the agent closes its descriptor (release) or
 * dies. Node opens files close-on-exec, so a tool the agent starts later never inherits it.
 * The holder writes its pid into the file for the refusal's sentence.
 */

export type StateDirLock =
  { ok: true; release: () => Promise<void> } | { ok: false; sentence: string; holderPid: number | undefined };

const LOCK_FILE = 'agent.lock';
/** What `flock` exits with when another description holds the lock; 1 is also its usage error. */
const HELD_ELSEWHERE = 75;
const PID_LOOKS = 10;
const PID_LOOK_INTERVAL_MS = 50;

/** Takes the state folder's lock (making the folder first, as the agent would), or says why not. */
export async function lockStateDir(stateDir: string): Promise<StateDirLock> {
  const refuse = (why: string): StateDirLock => ({
    ok: false,
    holderPid: undefined,
    sentence: `the state folder ${stateDir} cannot be locked: ${why}; the agent does not start without the lock that keeps it the only one on this folder`,
  });
  const folderProblem = checkFolder(stateDir);
  if (folderProblem !== undefined) return refuse(folderProblem);
  const path = join(stateDir, LOCK_FILE);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return refuse(`${path} is a symbolic link (left as it is; remove it)`);
    if (code === 'EISDIR') return refuse(`${path} is a folder (left as it is; remove it)`);
    return refuse(`${path} cannot be opened (${code ?? (error as Error).message})`);
  }
  const fileProblem = checkLockFile(fd, path);
  if (fileProblem !== undefined) {
    closeSync(fd);
    return refuse(fileProblem);
  }
  const taken = await flock(fd);
  if (taken.kind !== 'taken') {
    const holderPid = taken.kind === 'held' ? await holderPidIn(fd) : undefined;
    closeSync(fd);
    if (taken.kind === 'failed') return refuse(taken.why);
    const who = holderPid === undefined ? 'another mpprov run' : `another mpprov run (pid ${holderPid})`;
    const unknown = holderPid === undefined ? ' (its pid could not be learned)' : '';
    return {
      ok: false,
      holderPid,
      sentence: `${who} already uses the state folder ${stateDir}${unknown}: only one agent may run per state folder, so this one does not start`,
    };
  }
  const pid = Buffer.from(`${JSON.stringify({ pid: process.pid })}\n`);
  try {
    ftruncateSync(fd, 0);
    writeSync(fd, pid, 0, pid.length, 0);
  } catch {
    // Held all the same; a second agent would only miss the pid in its sentence.
  }
  let open = true;
  return {
    ok: true,
    release: () => {
      if (open) closeSync(fd);
      open = false;
      return Promise.resolve();
    },
  };
}

/**
 * Makes the folder (0700) and checks that no one but the agent's user can create, replace or
 * open anything in it. Its parents are left to the administrator: whoever can rename the folder
 * itself could swap the whole state, the lock being the least of it.
 */
function checkFolder(stateDir: string): string | undefined {
  try {
    makeFolderSync(stateDir, 0o700);
    const info = statSync(stateDir);
    if (!info.isDirectory()) return 'it is not a folder';
    const uid = process.geteuid?.();
    if (uid !== undefined && info.uid !== uid) {
      return `it belongs to uid ${info.uid}, not to the agent's user (uid ${uid}), who could take the lock first`;
    }
    if ((info.mode & 0o022) !== 0) {
      return `other users can write in it (mode ${modeOf(info.mode)}) and could take the lock first; make it mode 0700`;
    }
    return undefined;
  } catch (error) {
    return `it cannot be made or read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}

/** A regular file of the agent's user that no one else can open; anything else is left untouched. */
function checkLockFile(fd: number, path: string): string | undefined {
  const info = fstatSync(fd);
  if (!info.isFile()) return `${path} is not a regular file (left as it is; remove it)`;
  const uid = process.geteuid?.();
  if (uid !== undefined && info.uid !== uid) {
    return `${path} belongs to uid ${info.uid}, not to the agent's user (uid ${uid}) (left as it is; remove it)`;
  }
  if ((info.mode & 0o077) !== 0) {
    return `other users could open ${path} (mode ${modeOf(info.mode)}) and hold its lock (left as it is; remove it)`;
  }
  return undefined;
}

type FlockResult = { kind: 'taken' } | { kind: 'held' } | { kind: 'failed'; why: string };

/** flock -n on the descriptor: taken, held (by another open description), or why it could not be tried. */
function flock(fd: number): Promise<FlockResult> {
  return new Promise((resolve) => {
    const child = spawn('flock', ['--exclusive', '--nonblock', '--conflict-exit-code', String(HELD_ELSEWHERE), '3'], {
      stdio: ['ignore', 'ignore', 'pipe', fd],
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      if (stderr.length < 1_000) stderr += chunk;
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      const why =
        error.code === 'ENOENT'
          ? 'flock (util-linux) is not installed'
          : `flock cannot be started (${error.code ?? error.message})`;
      resolve({ kind: 'failed', why });
    });
    child.once('close', (code, signal) => {
      if (code === 0) resolve({ kind: 'taken' });
      else if (code === HELD_ELSEWHERE) resolve({ kind: 'held' });
      else {
        const said = stderr.trim() === '' ? '' : `: ${stderr.trim()}`;
        resolve({ kind: 'failed', why: `flock failed (${signal ?? `status ${String(code)}`}${said})` });
      }
    });
  });
}

/**
 * The holder's pid from the file. A holder that has just taken the lock writes its pid a moment
 * later: until then the file holds nothing, or the pid of an agent that was killed; so a pid that
 * is missing or no longer runs is read again, briefly, before the sentence does without it.
 */
async function holderPidIn(fd: number): Promise<number | undefined> {
  for (let look = 1; ; look += 1) {
    const pid = pidIn(fd);
    if (pid !== undefined && processAlive(pid)) return pid;
    if (look >= PID_LOOKS) return undefined;
    await new Promise((resolve) => setTimeout(resolve, PID_LOOK_INTERVAL_MS));
  }
}

function pidIn(fd: number): number | undefined {
  try {
    // A holder's line is a few bytes; anything longer is not one.
    const buffer = Buffer.alloc(256);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    const value: unknown = JSON.parse(buffer.subarray(0, length).toString('utf8').split('\n')[0] ?? '');
    if (typeof value !== 'object' || value === null || !('pid' in value)) return undefined;
    const pid = value.pid;
    return typeof pid === 'number' && Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function modeOf(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}
