import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readlinkSync } from 'node:fs';
import { parsePortState, restoreCommands, type PortState, type SavedPortState } from './port-state.js';
import { firstLine, runCommand, runCommandNow, type PreflightTools } from './system-commands.js';

/**
 * A preflight's hold on the laptop's port: a network namespace of its own (`mppf-<pid>-<n>`), the
 * port moved into it, and a private folder (0700, `$TMPDIR/mppf-<pid>-<n>-*`) for the supplicant's
 * files and the port's saved state. Whatever runs there cannot touch the laptop's other routes or
 * addresses; closing moves the port back and restores what it had. Daemons die with this process
 * (setpriv --pdeathsig); a SIGKILLed run's namespace and folder are found by the next run
 * (abandoned-runs.ts). Signals and process exit close synchronously.
 */

export const RUN_PREFIX = 'mppf';
export const STATE_FILE = 'port-state.json';

export interface PortSession {
  readonly name: string;
  readonly dir: string;
  readonly port: string;
  readonly tools: PreflightTools;
  readonly original: PortState;
  readonly daemons: Set<ChildProcess>;
  closed: boolean;
}

let sessions = 0;
const live = new Set<PortSession>();

/** Takes the port: saves its state, makes the namespace, moves the port in and brings it (and lo) up. */
export async function openPortNamespace(port: string, tools: PreflightTools): Promise<PortSession> {
  sessions += 1;
  const name = `${RUN_PREFIX}-${process.pid}-${sessions}`;
  const [addr, routes4, routes6] = await Promise.all([
    runCommand(tools.ip, ['-j', 'addr', 'show', 'dev', port]),
    runCommand(tools.ip, ['-j', '-4', 'route', 'show', 'dev', port]),
    runCommand(tools.ip, ['-j', '-6', 'route', 'show', 'dev', port]),
  ]);
  if (addr.code !== 0) throw new Error(`cannot read the port ${port}: ${firstLine(addr.stderr)}`);
  const original = parsePortState(port, addr.stdout, routes4.stdout || '[]', routes6.stdout || '[]');
  const dir = await mkdtemp(join(tmpdir(), `${name}-`));
  const session: PortSession = { name, dir, port, tools, original, daemons: new Set(), closed: false };
  // Registered as soon as there is a folder: a signal from here on removes it.
  register(session);
  // Saved before the port moves: a run killed from here on leaves what the next run needs.
  const saved: SavedPortState = { origin: ownNetworkNamespace(), state: original };
  await writeFile(join(dir, STATE_FILE), JSON.stringify(saved), { mode: 0o600 });
  try {
    for (const args of [
      ['netns', 'add', name],
      ['link', 'set', port, 'netns', name],
      ['-n', name, 'link', 'set', 'lo', 'up'],
      ['-n', name, 'link', 'set', port, 'up'],
    ]) {
      const result = await runCommand(tools.ip, args);
      if (result.code !== 0) throw new Error(`"ip ${args.join(' ')}" failed: ${firstLine(result.stderr)}`);
    }
  } catch (error) {
    await closePortNamespace(session);
    throw error;
  }
  return session;
}

/** `ip -n <namespace> ...`, bounded. */
export function ipIn(session: PortSession, args: readonly string[]) {
  return runCommand(session.tools.ip, ['-n', session.name, ...args]);
}

/** Starts a daemon inside the namespace, tied to this process's life; stdout and stderr piped. */
export function spawnIn(session: PortSession, command: string, args: readonly string[]): ChildProcess {
  if (session.closed) throw new Error('the preflight namespace is already closed');
  const child = spawn(
    session.tools.ip,
    ['netns', 'exec', session.name, session.tools.setpriv, '--pdeathsig', 'KILL', '--', command, ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  session.daemons.add(child);
  const forget = () => session.daemons.delete(child);
  child.once('exit', forget);
  child.once('error', forget);
  return child;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once it is gone. */
export async function stopDaemon(child: ChildProcess, graceMs = 1_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * Gives the port back: stops the daemons, removes what was made in the namespace, moves the port
 * back to this process's namespace, restores its link state, addresses and routes, deletes the
 * namespace and the private folder. Returns a sentence per thing it could not put back.
 */
export async function closePortNamespace(session: PortSession): Promise<string[]> {
  if (session.closed) return [];
  session.closed = true;
  await Promise.all([...session.daemons].map((child) => stopDaemon(child)));
  const failures = giveBack(session.name, session.original, session.tools.ip);
  await rm(session.dir, { recursive: true, force: true });
  live.delete(session);
  if (live.size === 0) uninstall();
  return failures;
}

/** The same, synchronously, for a signal or process exit. */
function closePortNamespaceNow(session: PortSession): void {
  if (session.closed && !live.has(session)) return;
  session.closed = true;
  for (const child of session.daemons) if (child.pid !== undefined) killQuietly(child.pid);
  giveBack(session.name, session.original, session.tools.ip);
  try {
    rmSync(session.dir, { recursive: true, force: true });
  } catch {
    // An exit handler must not throw; the next run removes a folder left here.
  }
  live.delete(session);
}

/**
 * Everything from the namespace back to ours, then the namespace deleted. Synchronous on purpose:
 * a signal handler and an exit handler run it too, where nothing asynchronous runs any more, and
 * it is a dozen short `ip` calls.
 */
export function giveBack(namespace: string, state: PortState | undefined, ip: string): string[] {
  const failures: string[] = [];
  const pids = runCommandNow(ip, ['netns', 'pids', namespace]);
  for (const pid of parsePids(pids.stdout)) killQuietly(pid);
  const links = runCommandNow(ip, ['-n', namespace, '-o', '-d', 'link', 'show']);
  for (const line of links.stdout.split('\n')) {
    const link = /^\d+: ([^:@\s]+)(@\S+)?:/.exec(line)?.[1];
    if (link === undefined || link === 'lo') continue;
    // A VLAN made here goes with the namespace; the laptop's own port comes back.
    if (/\bvlan protocol\b/.test(line)) runCommandNow(ip, ['-n', namespace, 'link', 'del', link]);
    else {
      const moved = runCommandNow(ip, ['-n', namespace, 'link', 'set', link, 'netns', String(process.pid)]);
      if (moved.code !== 0) failures.push(`could not move ${link} back: ${firstLine(moved.stderr)}`);
    }
  }
  if (state !== undefined)
    for (const args of restoreCommands(state)) {
      const result = runCommandNow(ip, args);
      if (result.code !== 0) failures.push(`could not restore "ip ${args.join(' ')}": ${firstLine(result.stderr)}`);
    }
  runCommandNow(ip, ['netns', 'del', namespace]);
  return failures;
}

/** This process's network namespace as the kernel names it (`net:[4026531840]`). */
export function ownNetworkNamespace(): string {
  return readlinkSync('/proc/self/ns/net');
}

/** Names of the namespaces this process holds now: never taken for a killed run's. */
export function liveNamespaces(): string[] {
  return [...live].map((session) => session.name);
}

function parsePids(text: string): number[] {
  return text
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

// Process-wide: handlers exist only while a session does. Ours run first (prepended); when nobody
// else listens we re-raise the signal after closing, so the process still ends as it demands.
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let installed = false;

function closeAllNow(): void {
  for (const session of [...live]) closePortNamespaceNow(session);
}

const handlers = Object.fromEntries(
  SIGNALS.map((signal) => [
    signal,
    () => {
      const othersListen = process.listenerCount(signal) > 1;
      closeAllNow();
      if (!othersListen) {
        uninstall();
        process.kill(process.pid, signal);
      }
    },
  ]),
) as Record<(typeof SIGNALS)[number], () => void>;

function register(session: PortSession): void {
  live.add(session);
  if (installed) return;
  installed = true;
  process.on('exit', closeAllNow);
  for (const signal of SIGNALS) process.prependListener(signal, handlers[signal]);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  process.removeListener('exit', closeAllNow);
  for (const signal of SIGNALS) process.removeListener(signal, handlers[signal]);
}
