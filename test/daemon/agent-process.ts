import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `mpprov run` as a real child process with its own agent.yaml, media root and state dir, all in
 * a temporary folder. Its stdout and stderr go to files, which the tests read (and search for
 * secrets) afterwards.
 */

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const cliPath = join(repoRoot, 'dist/cli/main.js');

export interface AgentWorld {
  dir: string;
  mediaRoot: string;
  stateDir: string;
  profilesDir: string;
  agentConfig: string;
  /** Prefixes of each start's output files (`agent.stdout.1`, ...). */
  stdoutFile: string;
  stderrFile: string;
  cleanup(): Promise<void>;
}

export async function makeWorld(options: { agentYaml?: (world: { mediaRoot: string; stateDir: string; profilesDir: string }) => string } = {}): Promise<AgentWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'mpprov-daemon-'));
  const mediaRoot = join(dir, 'media');
  const stateDir = join(dir, 'state');
  const profilesDir = join(dir, 'profiles');
  await mkdir(mediaRoot);
  await mkdir(profilesDir);
  const agentConfig = join(dir, 'agent.yaml');
  const text =
    options.agentYaml?.({ mediaRoot, stateDir, profilesDir }) ??
    `version: 1\nmedia_roots: [${mediaRoot}]\nstate_dir: ${stateDir}\nlog_level: debug\ntimeouts: { request_s: 5, restart_s: 30 }\n`;
  await writeFile(agentConfig, text);
  return {
    dir,
    mediaRoot,
    stateDir,
    profilesDir,
    agentConfig,
    stdoutFile: join(dir, 'agent.stdout'),
    stderrFile: join(dir, 'agent.stderr'),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

export interface AgentProcess {
  child: ChildProcess;
  /** Sends the signal and waits for the exit status. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): Promise<string>;
}

let starts = 0;

/** Starts `mpprov run` for the world; each start has its own output files beside the world's. */
export async function startAgent(world: AgentWorld, env: NodeJS.ProcessEnv = {}): Promise<AgentProcess> {
  starts += 1;
  const stdoutFile = `${world.stdoutFile}.${starts}`;
  const stderrFile = `${world.stderrFile}.${starts}`;
  const out = openSync(stdoutFile, 'a');
  const err = openSync(stderrFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [cliPath, 'run', '--agent-config', world.agentConfig], {
      stdio: ['ignore', out, err],
      env: { ...process.env, NO_COLOR: '1', JOURNAL_STREAM: '', NOTIFY_SOCKET: '', ...env },
    });
  } finally {
    closeSync(out);
    closeSync(err);
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const output = async (): Promise<string> => (await readFile(stdoutFile, 'utf8').catch(() => '')) + (await readFile(stderrFile, 'utf8').catch(() => ''));
  // Ready once it says it is watching: mounts before that would be found by the start-up scan anyway.
  await waitFor(async () => (await output()).includes('watching media roots'), 15_000, 'the agent to start', output, exited);
  return {
    child,
    exited,
    output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Polls `check` until it holds; on timeout the error carries the agent's output. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
  output?: () => Promise<string>,
  exited?: Promise<unknown>,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  let dead = false;
  void exited?.then(() => (dead = true));
  for (;;) {
    if (await check()) return;
    if (Date.now() > end || dead) {
      const tail = output === undefined ? '' : `\n--- agent output ---\n${(await output()).split('\n').slice(-60).join('\n')}`;
      throw new Error(`${dead ? 'the agent exited' : 'timed out'} waiting for ${what}${tail}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface HistoryLine {
  event: string;
  id: string;
  result?: string;
  summary?: string;
  stick_log?: string;
  stopped?: boolean;
  source?: { kind: string; label: string };
  devices?: { name: string; outcome: string; code?: string }[];
  reason?: string;
  where?: string[];
}

export async function readJobs(stateDir: string): Promise<HistoryLine[]> {
  const text = await readFile(join(stateDir, 'jobs.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as HistoryLine);
}

export async function waitForJobEnds(world: AgentWorld, count: number, agent?: AgentProcess, timeoutMs = 25_000): Promise<HistoryLine[]> {
  let ends: HistoryLine[] = [];
  await waitFor(
    async () => {
      ends = (await readJobs(world.stateDir)).filter((r) => r.event === 'end');
      return ends.length >= count;
    },
    timeoutMs,
    `${count} job(s) to end`,
    agent?.output,
    agent?.exited,
  );
  return ends;
}

/** Every file under `dir`, with its content, for the secrets search. */
export async function allFiles(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const walk = async (d: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) out.set(path, await readFile(path));
    }
  };
  await walk(dir);
  return out;
}
