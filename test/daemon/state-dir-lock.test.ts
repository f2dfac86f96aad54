import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCli } from '../support/run-cli.js';
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
