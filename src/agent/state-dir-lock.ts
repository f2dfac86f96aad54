import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';

/**
 * One agent per state folder: two `mpprov run` on one state folder took every stick twice (two
 * jobs, two POSTs, restarts on top of restarts). The lock is an abstract unix socket named after
 * the device and inode of a file in the folder (lockName), so every spelling of the path (a link,
 * a bind mount) is one lock, and the kernel drops it the moment its holder dies however it dies:
 * a SIGKILLed agent never blocks the next start, and nothing on disk says "locked", so nothing
 * can go stale and no pid can be reused. Node opens sockets close-on-exec, so a tool the agent
 * starts (ssh-keygen, hostapd) never inherits it. The holder answers each connection with its
 * pid, for the sentence.
 *
 * Left out: abstract names belong to a network namespace, so agents in two namespaces sharing
 * one state folder are not kept apart; the agent runs in the host's namespace under systemd.
 */

export type StateDirLock =
  { ok: true; release: () => Promise<void> } | { ok: false; sentence: string; holderPid: number | undefined };

const ASK_TIMEOUT_MS = 2_000;
/** The file whose identity names the lock; never removed, never read or written. */
const LOCK_ANCHOR = 'agent.lock';
const ATTEMPTS = 3;

/** Takes the state folder's lock (making the folder first, as the agent would), or says who holds it. */
export async function lockStateDir(stateDir: string): Promise<StateDirLock> {
  let name: string;
  try {
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    name = await lockName(stateDir);
  } catch {
    // A folder that cannot be made or looked at: the agent itself says why when it opens it.
    return { ok: true, release: () => Promise.resolve() };
  }
  for (let attempt = 1; ; attempt += 1) {
    const server = await listen(name);
    if (server !== undefined) {
      // Never what keeps a finished agent alive.
      server.unref();
      return { ok: true, release: () => new Promise((resolve) => server.close(() => resolve())) };
    }
    const holder = await askHolder(name);
    // The holder died between our bind and our question: the name is free again, so try once more.
    if (holder.gone && attempt < ATTEMPTS) continue;
    const who = holder.pid === undefined ? 'another mpprov run' : `another mpprov run (pid ${holder.pid})`;
    const unknown = holder.pid === undefined ? ' (its pid could not be learned)' : '';
    return {
      ok: false,
      holderPid: holder.pid,
      sentence: `${who} already uses the state folder ${stateDir}${unknown}: only one agent may run per state folder, so this one does not start`,
    };
  }
}

/**
 * The lock's name: the device and inode of `agent.lock` inside the state folder, made once and
 * kept. Abstract names are open to every local user, and a name they could compute could be bound
 * first to keep the agent from starting; the state folder is root's alone (0700), so no one else
 * can stat a file inside it, while every spelling of the folder's path still finds the same file.
 */
async function lockName(stateDir: string): Promise<string> {
  const handle = await open(
    join(stateDir, LOCK_ANCHOR),
    constants.O_RDONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    0o600,
  );
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error(`${LOCK_ANCHOR} is not a regular file`);
    return `\0mpprov-agent-state-${info.dev}-${info.ino}`;
  } finally {
    await handle.close();
  }
}

/** The bound server, or undefined when the name is taken. */
function listen(name: string): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.end(`${JSON.stringify({ pid: process.pid })}\n`);
    });
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(undefined);
      else reject(error);
    });
    server.listen({ path: name }, () => resolve(server));
  });
}

/** Asks the lock's holder for its pid; `gone` when nobody answers at that name any more. */
function askHolder(name: string): Promise<{ pid: number | undefined; gone: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ path: name });
    let text = '';
    let settled = false;
    const settle = (gone: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ pid: pidIn(text), gone });
    };
    const timer = setTimeout(() => settle(false), ASK_TIMEOUT_MS);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      // A holder's answer is a line of a few bytes; anything longer is not one.
      text += chunk;
      if (text.length > 256 || text.includes('\n')) settle(false);
    });
    socket.on('end', () => settle(false));
    socket.on('error', (error: NodeJS.ErrnoException) => settle(error.code === 'ECONNREFUSED'));
  });
}

function pidIn(text: string): number | undefined {
  try {
    const value: unknown = JSON.parse(text.split('\n')[0] ?? '');
    if (typeof value !== 'object' || value === null || !('pid' in value)) return undefined;
    const pid = value.pid;
    return typeof pid === 'number' && Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
