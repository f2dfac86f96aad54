import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Exit, type RunningProcess, startCli } from '../support/run-cli.js';
import { waitFor } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';

/**
 * One agent per state folder: a second `mpprov run` on the same state folder (under any spelling
 * of its path) refuses to start, naming the folder and the running agent's pid, and leaves the
 * first one running; once the first is SIGKILLed, nothing of its lock is left to block the next.
 */
describe('mpprov run on a state folder another agent uses', () => {
  const rig = useAgentRig({ fatSticks: false });
  const ENV = (dir: string) => ({ JOURNAL_STREAM: '', NOTIFY_SOCKET: '', RUNTIME_DIRECTORY: join(dir, 'run-2') });

  it('the second refuses to start with one sentence; the first keeps running', { timeout: 60_000 }, async () => {
    const world = await rig.makeWorld();
    const first = await rig.startAgent(world);
    const second = startCli(['run', '--agent-config', world.agentConfig], { env: ENV(world.dir) });
    const exit = await second.exited;
    expect(exit.code, second.output()).toBe(1);
    expect(second.stderr()).toBe(
      `another mpprov run (pid ${first.child.pid}) already uses the state folder ${world.stateDir}: only one agent may run per state folder, so this one does not start\n`,
    );
    expect(second.stdout()).toBe('');
    // Still running, and still watching, a moment later.
    await new Promise((r) => setTimeout(r, 500));
    expect(first.child.exitCode).toBeNull();
    expect(first.child.signalCode).toBeNull();
  });

  it('the same folder through a link, given with --state-dir, is the same lock', { timeout: 60_000 }, async () => {
    const world = await rig.makeWorld();
    const first = await rig.startAgent(world);
    const link = join(world.dir, 'state-link');
    symlinkSync(world.stateDir, link);
    const otherConfig = join(world.dir, 'other.yaml');
    writeFileSync(otherConfig, `version: 1\nmedia_roots: [${world.mediaRoot}]\nstate_dir: ${join(world.dir, 'x')}\n`);
    const second = startCli(['run', '--agent-config', otherConfig, '--state-dir', link], { env: ENV(world.dir) });
    expect((await second.exited).code, second.output()).toBe(1);
    expect(second.stderr()).toBe(
      `another mpprov run (pid ${first.child.pid}) already uses the state folder ${link}: only one agent may run per state folder, so this one does not start\n`,
    );
    expect(first.child.exitCode).toBeNull();
  });

  it('after the first is SIGKILLed, a new one starts on the same folder', { timeout: 60_000 }, async () => {
    const world = await rig.makeWorld();
    const first = await rig.startAgent(world);
    // Held while it lives...
    const refused = startCli(['run', '--agent-config', world.agentConfig], { env: ENV(world.dir) });
    expect((await refused.exited).code, refused.output()).toBe(1);
    expect(refused.stderr()).toContain(`(pid ${first.child.pid}) already uses the state folder`);
    // ...and gone with it, with no file or pid left behind to be mistaken for it.
    expect((await first.stop('SIGKILL')).signal).toBe('SIGKILL');
    // startAgent waits until it watches its media roots: it started, nothing held it back.
    const next = await rig.startAgent(world);
    expect(await next.output()).not.toContain('already uses the state folder');
    expect(next.child.exitCode).toBeNull();
  });
});

const NOBODY = 65534;
const REFUSED = 'the agent does not start without the lock that keeps it the only one on this folder';

/** How `run` ended within `ms`, or 'still running' (then killed): an agent that ran unlocked never ends by itself. */
async function exitWithin(run: RunningProcess, ms: number): Promise<Exit | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), ms)));
  const result = await Promise.race([run.exited, late]);
  clearTimeout(timer);
  if (result === 'still running') await run.stop('SIGKILL');
  return result;
}

/**
 * Another local user (nobody, through setpriv) squatting what an unprivileged process can reach:
 * it binds the abstract name the lock once had and answers as a holder would, and tries to create
 * agent.lock and agent.sock in the state folder. Its first line is what those tries gave.
 */
function squat(
  stateDir: string,
  abstractName: string,
): { child: ChildProcess; tries: Promise<Record<string, string>> } {
  const script = `
    const fs = require('node:fs'), net = require('node:net'), path = require('node:path');
    const [stateDir, name] = process.argv.slice(1);
    const tries = {};
    for (const file of ['agent.lock', 'agent.sock']) {
      try { fs.closeSync(fs.openSync(path.join(stateDir, file), 'a')); tries[file] = 'created'; }
      catch (error) { tries[file] = error.code; }
    }
    net.createServer((s) => s.end('{"pid":1}\\n')).listen({ path: '\\0' + name }, () => console.log(JSON.stringify(tries)));
  `;
  const child = spawn(
    'setpriv',
    [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      '--clear-groups',
      process.execPath,
      '-e',
      script,
      stateDir,
      abstractName,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  const tries = new Promise<Record<string, string>>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0] ?? '') as Record<string, string>);
    });
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`the squatter exited (${String(code)}): ${out}`)));
  });
  return { child, tries };
}

/** The abstract socket name the lock used to bind (without its leading NUL): anyone could read it in /proc/net/unix. */
function oldAbstractName(stateDir: string): string {
  const info = statSync(join(stateDir, 'agent.lock'));
  return `mpprov-agent-state-${info.dev}-${info.ino}`;
}

describe('the state folder lock against other users and leftovers', () => {
  const rig = useAgentRig({ fatSticks: false });
  const squatters: ChildProcess[] = [];
  afterEach(() => {
    for (const child of squatters.splice(0)) child.kill('SIGKILL');
  });
  const ENV = (dir: string, run = 'run-2') => ({
    JOURNAL_STREAM: '',
    NOTIFY_SOCKET: '',
    RUNTIME_DIRECTORY: join(dir, run),
  });

  it(
    'another user squatting the old lock name, or the folder, cannot keep the agent from starting',
    { timeout: 60_000 },
    async () => {
      const world = await rig.makeWorld();
      const first = await rig.startAgent(world);
      expect((await first.stop('SIGKILL')).signal).toBe('SIGKILL');
      const squatter = squat(world.stateDir, oldAbstractName(world.stateDir));
      squatters.push(squatter.child);
      // It can reach nothing inside the folder...
      expect(await squatter.tries).toEqual({ 'agent.lock': 'EACCES', 'agent.sock': 'EACCES' });
      // ...and its answer at the old name is not taken for a running agent: startAgent waits until it watches.
      const next = await rig.startAgent(world);
      expect(await next.output()).not.toContain('already uses the state folder');
      expect(next.child.exitCode).toBeNull();
    },
  );

  const planted: {
    what: string;
    plant: (path: string, dir: string) => void;
    why: (path: string) => string;
    untouched: (path: string, dir: string) => void;
  }[] = [
    {
      what: 'a symbolic link',
      plant: (path, dir) => {
        writeFileSync(join(dir, 'elsewhere'), 'keep');
        symlinkSync(join(dir, 'elsewhere'), path);
      },
      why: (path) => `${path} is a symbolic link (left as it is; remove it)`,
      untouched: (path, dir) => {
        expect(readlinkSync(path)).toBe(join(dir, 'elsewhere'));
        expect(readFileSync(join(dir, 'elsewhere'), 'utf8')).toBe('keep');
      },
    },
    {
      what: 'a FIFO',
      plant: (path) => expect(spawnSync('mkfifo', ['-m', '600', path]).status).toBe(0),
      why: (path) => `${path} is not a regular file (left as it is; remove it)`,
      untouched: (path) => expect(lstatSync(path).isFIFO()).toBe(true),
    },
    {
      what: 'a folder',
      plant: (path) => mkdirSync(path, { mode: 0o700 }),
      why: (path) => `${path} is a folder (left as it is; remove it)`,
      untouched: (path) => expect(lstatSync(path).isDirectory()).toBe(true),
    },
    {
      what: 'a file other users can open',
      plant: (path) => {
        writeFileSync(path, 'x');
        chmodSync(path, 0o644);
      },
      why: (path) => `other users could open ${path} (mode 0644) and hold its lock (left as it is; remove it)`,
      untouched: (path) => {
        expect(lstatSync(path).mode & 0o777).toBe(0o644);
        expect(readFileSync(path, 'utf8')).toBe('x');
      },
    },
    {
      what: "another user's file",
      plant: (path) => {
        writeFileSync(path, 'x', { mode: 0o600 });
        chownSync(path, NOBODY, NOBODY);
      },
      why: (path) => `${path} belongs to uid ${NOBODY}, not to the agent's user (uid 0) (left as it is; remove it)`,
      untouched: (path) => {
        expect(lstatSync(path).uid).toBe(NOBODY);
        expect(readFileSync(path, 'utf8')).toBe('x');
      },
    },
  ];

  it.each(planted)(
    'agent.lock planted as $what is refused with one sentence and left as it is',
    { timeout: 60_000 },
    async (p) => {
      const world = await rig.makeWorld();
      mkdirSync(world.stateDir, { mode: 0o700 });
      const path = join(world.stateDir, 'agent.lock');
      p.plant(path, world.dir);
      const run = startCli(['run', '--agent-config', world.agentConfig], { env: ENV(world.dir) });
      const exit = await exitWithin(run, 15_000);
      expect(exit, run.output()).toEqual({ code: 1, signal: null });
      expect(run.stderr()).toBe(`the state folder ${world.stateDir} cannot be locked: ${p.why(path)}; ${REFUSED}\n`);
      expect(run.stdout()).toBe('');
      p.untouched(path, world.dir);
    },
  );

  it.each([
    {
      what: 'other users can write in',
      plant: (dir: string) => chmodSync(dir, 0o777),
      why: 'other users can write in it (mode 0777) and could take the lock first; make it mode 0700',
    },
    {
      what: 'belongs to another user',
      plant: (dir: string) => chownSync(dir, NOBODY, NOBODY),
      why: `it belongs to uid ${NOBODY}, not to the agent's user (uid 0), who could take the lock first`,
    },
  ])('a state folder $what is refused with one sentence', { timeout: 60_000 }, async (p) => {
    const world = await rig.makeWorld();
    mkdirSync(world.stateDir, { mode: 0o700 });
    p.plant(world.stateDir);
    const run = startCli(['run', '--agent-config', world.agentConfig], { env: ENV(world.dir) });
    const exit = await exitWithin(run, 15_000);
    expect(exit, run.output()).toEqual({ code: 1, signal: null });
    expect(run.stderr()).toBe(`the state folder ${world.stateDir} cannot be locked: ${p.why}; ${REFUSED}\n`);
  });

  it(
    'two agents started at the same instant after a crash: exactly one runs, every time',
    { timeout: 180_000 },
    async () => {
      const world = await rig.makeWorld();
      // What a SIGKILLed agent leaves: its agent.lock, with its pid in it.
      const crashed = await rig.startAgent(world);
      expect((await crashed.stop('SIGKILL')).signal).toBe('SIGKILL');
      // And another user squatting the old name meanwhile, as on a shared machine.
      const squatter = squat(world.stateDir, oldAbstractName(world.stateDir));
      squatters.push(squatter.child);
      await squatter.tries;
      const rounds = 10;
      for (let round = 1; round <= rounds; round += 1) {
        const pair = [
          startCli(['run', '--agent-config', world.agentConfig], { env: ENV(world.dir, `run-a${round}`) }),
          startCli(['run', '--agent-config', world.agentConfig], { env: ENV(world.dir, `run-b${round}`) }),
        ];
        try {
          const settled = (p: RunningProcess) =>
            p.child.exitCode !== null || p.output().includes('watching media roots');
          await waitFor(
            () => pair.every(settled),
            30_000,
            `round ${round}: both starters to run or give up`,
            () => Promise.resolve(pair.map((p) => p.output()).join('\n---\n')),
          );
          const running = pair.filter((p) => p.child.exitCode === null);
          const refused = pair.filter((p) => p.child.exitCode !== null);
          expect(running.length, `round ${round}: ${pair.map((p) => p.output()).join('\n---\n')}`).toBe(1);
          expect(refused.length).toBe(1);
          expect((await refused[0]?.exited)?.code).toBe(1);
          expect(refused[0]?.stderr()).toBe(
            `another mpprov run (pid ${running[0]?.child.pid}) already uses the state folder ${world.stateDir}: only one agent may run per state folder, so this one does not start\n`,
          );
        } finally {
          // The winner is killed too, so each round starts over a crashed agent's leftovers.
          for (const p of pair) await p.stop('SIGKILL');
        }
      }
    },
  );
});
