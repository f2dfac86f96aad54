import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { holdSignal } from '../../src/agent/early-signal.js';
import { startCli } from '../support/run-cli.js';
import { makeWorld, waitFor, type AgentWorld } from './agent-process.js';

describe('a SIGHUP while the agent starts', () => {
  let world: AgentWorld | undefined;
  afterEach(async () => {
    await world?.cleanup();
    world = undefined;
  });

  it('is remembered and done once the agent can reload; it never kills the agent', { timeout: 30_000 }, async () => {
    world = await makeWorld();
    const agent = startCli(['run', '--agent-config', world.agentConfig], {
      env: { JOURNAL_STREAM: '', NOTIFY_SOCKET: '', RUNTIME_DIRECTORY: join(world.dir, 'run') },
    });
    try {
      // The first line the agent writes: the config is read, nothing watches yet, no handler of
      // the running agent exists. systemd's ExecReload can come exactly then.
      await new Promise<void>((resolve) => {
        const look = (): void => {
          if (!agent.output().includes(' starting: agent config ')) return;
          agent.child.stdout?.off('data', look);
          agent.child.kill('SIGHUP');
          resolve();
        };
        agent.child.stdout?.on('data', look);
      });
      await waitFor(
        () => agent.output().includes(`SIGHUP: reloaded ${world?.agentConfig ?? ''}`),
        15_000,
        'the reload asked for during start-up',
        () => Promise.resolve(agent.output()),
        agent.exited,
      );
      expect(agent.output().match(/SIGHUP: reloaded/g)).toHaveLength(1);
      expect(agent.output()).toContain('watching media roots');
      const exit = await agent.stop('SIGTERM');
      expect(exit).toEqual({ code: 0, signal: null });
    } finally {
      await agent.stop('SIGKILL');
    }
  });

  it(
    'before the daemon, while the state folder is locked, is held too; it never kills the agent',
    { timeout: 30_000 },
    async () => {
      world = await makeWorld();
      // `mpprov run` locks the state folder through flock(1) before the daemon starts: a flock of
      // the test's own sends the SIGHUP from there, while the agent waits for it.
      const flock = execFileSync('sh', ['-c', 'command -v flock'], { encoding: 'utf8' }).trim();
      const bin = join(world.dir, 'bin');
      await mkdir(bin);
      await writeFile(join(bin, 'flock'), `#!/bin/sh\nkill -HUP $PPID\nexec ${flock} "$@"\n`);
      await chmod(join(bin, 'flock'), 0o755);
      const agent = startCli(['run', '--agent-config', world.agentConfig], {
        env: {
          JOURNAL_STREAM: '',
          NOTIFY_SOCKET: '',
          RUNTIME_DIRECTORY: join(world.dir, 'run'),
          PATH: `${bin}:${process.env.PATH ?? ''}`,
        },
      });
      try {
        await waitFor(
          () => agent.output().includes(`SIGHUP: reloaded ${world?.agentConfig ?? ''}`),
          15_000,
          'the reload asked for before the daemon started',
          () => Promise.resolve(agent.output()),
          agent.exited,
        );
        expect(agent.output().match(/SIGHUP: reloaded/g)).toHaveLength(1);
        expect(await agent.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      } finally {
        await agent.stop('SIGKILL');
      }
    },
  );

  it('a signal held comes once at hand-over; after release nothing listens', () => {
    const target = new EventEmitter();
    const signal = holdSignal('SIGHUP', target);
    target.emit('SIGHUP');
    target.emit('SIGHUP');
    const calls: string[] = [];
    signal.handOver(() => calls.push('reload'));
    expect(calls).toEqual(['reload']);
    target.emit('SIGHUP');
    expect(calls).toEqual(['reload', 'reload']);
    signal.release();
    expect(target.listenerCount('SIGHUP')).toBe(0);
    target.emit('SIGHUP');
    expect(calls).toHaveLength(2);
  });
});
