import { readFileSync } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { giveBack, liveNamespaces, ownNetworkNamespace, RUN_PREFIX, STATE_FILE } from './port-namespace.js';
import { SavedPortState } from './port-state.js';
import { runCommand } from './system-commands.js';
import { processAlive } from '../core/process-alive.js';

const OWN_NAME = new RegExp(`^(${RUN_PREFIX}-(\\d+)-\\d+)(-|$)`);

/** When process `pid` started (ms since the epoch), from /proc; undefined where /proc does not say. */
function processStartMs(pid: number): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name's `)`: starttime, field 22 of the line, in clock ticks since boot.
    const ticks = Number(line.slice(line.lastIndexOf(')') + 2).split(' ')[19]);
    const boot = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
    // Ticks of USER_HZ, 100 on the architectures a technician's laptop has.
    return Number.isFinite(ticks) && Number.isFinite(boot) ? boot * 1_000 + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The run's process is alive: its pid is, and it started before the run last wrote its folder. A
 * pid another process took since (after a SIGKILL, or a power loss with /tmp on disk) is not the
 * run's: else its folder, with the stick's keys in it, would stay for as long as that process
 * lives. Two seconds of slack: /proc gives the boot time in whole seconds.
 */
function runAlive(pid: number, lastWriteMs: number | undefined): boolean {
  if (!processAlive(pid)) return false;
  const started = processStartMs(pid);
  return lastWriteMs === undefined || started === undefined || started <= lastWriteMs + 2_000;
}

/** The private folders in $TMPDIR by run name, with the time the latest of them was written. */
async function foldersByRun(): Promise<Map<string, { dirs: string[]; lastWriteMs: number }>> {
  const runs = new Map<string, { dirs: string[]; lastWriteMs: number }>();
  for (const entry of await readdir(tmpdir()).catch(() => [] as string[])) {
    const run = OWN_NAME.exec(entry)?.[1];
    if (run === undefined || entry === run) continue;
    const dir = join(tmpdir(), entry);
    const written = await stat(dir).then(
      (s) => s.mtimeMs,
      () => 0,
    );
    const known = runs.get(run);
    runs.set(run, { dirs: [...(known?.dirs ?? []), dir], lastWriteMs: Math.max(known?.lastWriteMs ?? 0, written) });
  }
  return runs;
}

/**
 * What a killed preflight (SIGKILL, power loss) left: its namespace with the laptop's port inside,
 * its private folder with the supplicant's files and the port's saved state. Only names of our
 * own pattern whose process is gone (or, with our own pid, that this process does not hold) are
 * touched. Returns one sentence per run cleaned up, for `problems` and stderr.
 */
export async function removeAbandonedRuns(ip: string): Promise<string[]> {
  const holding = new Set(liveNamespaces());
  const runFolders = await foldersByRun();
  const abandoned = (name: string): string | undefined => {
    const match = OWN_NAME.exec(name);
    if (match?.[1] === undefined) return undefined;
    const pid = Number(match[2]);
    const gone = pid === process.pid ? !holding.has(match[1]) : !runAlive(pid, runFolders.get(match[1])?.lastWriteMs);
    return gone ? match[1] : undefined;
  };
  const folders = new Map<string, string[]>();
  for (const [run, { dirs }] of runFolders) if (abandoned(run) !== undefined) folders.set(run, dirs);
  const listing = await runCommand(ip, ['netns', 'list']);
  const namespaces = listing.stdout
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => abandoned(name) === name);
  const said: string[] = [];
  const here = ownNetworkNamespace();
  for (const namespace of namespaces) {
    const saved = await savedState(folders.get(namespace) ?? []);
    // A port taken from another namespace (another laptop namespace on a test machine) is
    // given back by a run there, never moved here.
    if (saved !== undefined && saved.origin !== here) {
      folders.delete(namespace);
      continue;
    }
    const state = saved?.state;
    const failures = giveBack(namespace, state, ip);
    const what =
      state === undefined
        ? 'moved its interfaces back'
        : `moved ${state.port} back and restored its addresses and routes`;
    said.push(
      `an interrupted preflight (process ${OWN_NAME.exec(namespace)?.[2] ?? '?'}) had left its namespace ${namespace}: ${what}${failures.length === 0 ? '' : `, but ${failures.join('; ')}`}`,
    );
  }
  for (const [run, dirs] of folders) {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    if (!namespaces.includes(run))
      said.push(`an interrupted preflight had left its private folder ${dirs.join(', ')}: removed it`);
  }
  return said;
}

/**
 * The process of another live preflight whose namespace holds `port` now, or undefined: a second
 * preflight on the same port says so instead of taking it, or of calling the port unknown.
 */
export async function preflightHolding(ip: string, port: string): Promise<number | undefined> {
  const listing = await runCommand(ip, ['netns', 'list']);
  const runFolders = await foldersByRun();
  for (const line of listing.stdout.split('\n')) {
    const match = OWN_NAME.exec(line.split(' ')[0] ?? '');
    if (match?.[1] === undefined) continue;
    const pid = Number(match[2]);
    if (pid === process.pid || !runAlive(pid, runFolders.get(match[1])?.lastWriteMs)) continue;
    if ((await runCommand(ip, ['-n', match[1], 'link', 'show', 'dev', port])).code === 0) return pid;
  }
  return undefined;
}

async function savedState(dirs: readonly string[]): Promise<SavedPortState | undefined> {
  for (const dir of dirs) {
    try {
      return SavedPortState.parse(JSON.parse(await readFile(join(dir, STATE_FILE), 'utf8')));
    } catch {
      // no state saved yet, or a damaged one: the interfaces still come back, without their addresses
    }
  }
  return undefined;
}
