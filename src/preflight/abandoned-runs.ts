import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { giveBack, liveNamespaces, ownNetworkNamespace, RUN_PREFIX, STATE_FILE } from './port-namespace.js';
import { SavedPortState } from './port-state.js';
import { runCommand } from './system-commands.js';

const OWN_NAME = new RegExp(`^(${RUN_PREFIX}-(\\d+)-\\d+)(-|$)`);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * What a killed preflight (SIGKILL, power loss) left: its namespace with the laptop's port inside,
 * its private folder with the supplicant's files and the port's saved state. Only names of our
 * own pattern whose process is gone (or, with our own pid, that this process does not hold) are
 * touched. Returns one sentence per run cleaned up, for `problems` and stderr.
 */
export async function removeAbandonedRuns(ip: string): Promise<string[]> {
  const holding = new Set(liveNamespaces());
  const abandoned = (name: string): string | undefined => {
    const match = OWN_NAME.exec(name);
    if (match?.[1] === undefined) return undefined;
    const pid = Number(match[2]);
    const gone = pid === process.pid ? !holding.has(match[1]) : !alive(pid);
    return gone ? match[1] : undefined;
  };
  const folders = new Map<string, string[]>();
  for (const entry of await readdir(tmpdir()).catch(() => [] as string[])) {
    const run = abandoned(entry);
    if (run !== undefined && entry !== run) folders.set(run, [...(folders.get(run) ?? []), join(tmpdir(), entry)]);
  }
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
  for (const line of listing.stdout.split('\n')) {
    const match = OWN_NAME.exec(line.split(' ')[0] ?? '');
    if (match?.[1] === undefined) continue;
    const pid = Number(match[2]);
    if (pid === process.pid || !alive(pid)) continue;
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
