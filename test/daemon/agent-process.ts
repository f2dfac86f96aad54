import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCli, type Exit } from '../support/run-cli.js';

/**
 * `mpprov run` as a real child process (test/support/run-cli.ts) with its own agent.yaml, media
 * root and state dir, all in a temporary folder. The tests read its output (and search it for
 * secrets) while it runs and afterwards.
 */

export interface AgentWorld {
  dir: string;
  mediaRoot: string;
  stateDir: string;
  profilesDir: string;
  agentConfig: string;
  cleanup(): Promise<void>;
}

export async function makeWorld(
  options: { agentYaml?: (world: { mediaRoot: string; stateDir: string; profilesDir: string }) => string } = {},
): Promise<AgentWorld> {
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
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

export interface AgentProcess {
  child: ChildProcess;
  /** Sends the signal and waits for the exit status. */
  stop: (signal?: NodeJS.Signals) => Promise<Exit>;
  exited: Promise<Exit>;
  /**
   * stdout and stderr so far (async, as waitFor's `output` takes it). Properties, not methods: no
   * `this`, so tests pass `agent.output` on as it is.
   */
  output: () => Promise<string>;
}

/** Starts `mpprov run` for the world, outside systemd unless `env` says otherwise, and waits until it watches. */
export async function startAgent(world: AgentWorld, env: NodeJS.ProcessEnv = {}): Promise<AgentProcess> {
  // status.json goes to the world's own runtime folder, never the machine's /run/mpprov.
  const agent = startCli(['run', '--agent-config', world.agentConfig], {
    env: { JOURNAL_STREAM: '', NOTIFY_SOCKET: '', RUNTIME_DIRECTORY: join(world.dir, 'run'), ...env },
  });
  const output = (): Promise<string> => Promise.resolve(agent.output());
  // Ready once it says it is watching: mounts before that would be found by the start-up scan anyway.
  try {
    await waitFor(
      async () => (await output()).includes('watching media roots'),
      15_000,
      'the agent to start',
      output,
      agent.exited,
    );
  } catch (error) {
    await agent.stop('SIGKILL');
    throw error;
  }
  return { child: agent.child, exited: agent.exited, output, stop: agent.stop };
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
      const tail =
        output === undefined ? '' : `\n--- agent output ---\n${(await output()).split('\n').slice(-60).join('\n')}`;
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

/**
 * The history's complete lines. The agent appends a record while a test may be reading: a read can
 * land inside that append and see part of the last line (a SyntaxError that failed
 * test/daemon/job-failure.test.ts in a loaded CI run), so only lines ending in a newline count.
 */
export async function readJobs(stateDir: string): Promise<HistoryLine[]> {
  const text = await readFile(join(stateDir, 'jobs.jsonl'), 'utf8').catch(() => '');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as HistoryLine);
}

export async function waitForJobEnds(
  world: AgentWorld,
  count: number,
  agent?: AgentProcess,
  timeoutMs = 25_000,
): Promise<HistoryLine[]> {
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
