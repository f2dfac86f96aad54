import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stickFiles } from '../support/stick-workspace.js';
import { type AgentProcess, type AgentWorld, readJobs, waitFor, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import type { MountedStick } from './fat-stick.js';

/**
 * SIGHUP while a job runs (agent-signals.test.ts covers SIGTERM and kills; profiles.test.ts a
 * reload that adds a folder). What a job reads of agent.yaml last is `when_done.eject`, once its
 * result is written: the reload lands during the device's restart and turns eject off, so the
 * running job releasing its stick shows it finished under the configuration it started with, and
 * the next job keeping its stick shows the new one in use. Then three reloads that must change
 * nothing: a broken file, a missing file, a state folder that cannot be made; each is said in the
 * journal, and the next stick is still found under the same media root and still not released.
 */

const agentYaml = (world: { mediaRoot: string; stateDir: string }, extra: string): string =>
  `version: 1\nmedia_roots: [${world.mediaRoot}]\nstate_dir: ${world.stateDir}\nlog_level: debug\ntimeouts: { request_s: 5, restart_s: 30 }\n${extra}`;

describe('mpprov run: agent.yaml reloaded (SIGHUP) during jobs', () => {
  const rig = useAgentRig();

  it(
    'a running job keeps its configuration, the next job takes the new one, and a bad reload changes nothing',
    { timeout: 180_000 },
    async () => {
      const sim = await rig.simulator({ restartMs: 3000 });
      const world = await rig.makeWorld({ agentYaml: (w) => agentYaml(w, '') });
      const agent = await rig.startAgent(world);
      const { image, mountPoint, stick } = await rig.insertStick(world, 'RELOAD', stickFiles([{ name: 'mp1', sim }]));

      // The reload, while the device restarts: eject off from now on.
      await waitFor(() => sim.state().phase === 'restarting', 30_000, 'the device to restart', agent.output);
      await writeFile(world.agentConfig, agentYaml(world, 'when_done: { eject: false }\n'));
      await hangUp(agent, `SIGHUP: reloaded ${world.agentConfig}; media roots ${world.mediaRoot}`);
      expect((await readJobs(world.stateDir)).filter((r) => r.event === 'end')).toEqual([]);
      expect(sim.state().phase).toBe('restarting');

      // The running job: started with eject on, so it releases its stick.
      const [first] = await waitForJobEnds(world, 1, agent, 60_000);
      expect(first?.result, await agent.output()).toBe('CHANGED');
      expect(await localLog(world, first?.id)).toContain(`the stick at ${mountPoint} is released`);
      await stick.exited;

      // The next job runs under the new configuration: its stick stays mounted.
      let inserted = await rig.mount(image, mountPoint, { logFile: join(world.dir, 'fuse-2.log') });
      await expectKept(world, agent, inserted, 2);

      // A broken file: its problem is said with its place, and nothing changes.
      await writeFile(world.agentConfig, `version: 1\nmedia_roots: [${world.mediaRoot}\nwhen_done: { eject: true }\n`);
      await hangUp(agent, 'SIGHUP: the agent config is invalid; keeping the one in use');
      expect(await agent.output()).toMatch(new RegExp(`agent config: ${world.agentConfig}:\\d+:\\d+ `));
      inserted = await rig.mount(image, mountPoint, { logFile: join(world.dir, 'fuse-3.log') });
      await expectKept(world, agent, inserted, 3);

      // The file gone: not the defaults (other media roots, another state folder), the same config.
      await rm(world.agentConfig);
      await hangUp(agent, `SIGHUP: ${world.agentConfig} does not exist (any more); keeping the agent config in use`);
      inserted = await rig.mount(image, mountPoint, { logFile: join(world.dir, 'fuse-4.log') });
      await expectKept(world, agent, inserted, 4);

      // A state folder that cannot be made: the whole reload is refused, eject included.
      const blocked = join(world.dir, 'fuse-2.log', 'state');
      await writeFile(world.agentConfig, agentYaml({ ...world, stateDir: blocked }, 'when_done: { eject: true }\n'));
      await hangUp(agent, `SIGHUP: cannot use the state directory ${blocked}`);
      inserted = await rig.mount(image, mountPoint, { logFile: join(world.dir, 'fuse-5.log') });
      await expectKept(world, agent, inserted, 5);
      expect(await agent.output()).not.toContain('reload failed');
      expect((await agent.stop()).code).toBe(0);
    },
  );
});

/** Sends SIGHUP and waits for the journal line that says what the reload did. */
async function hangUp(agent: AgentProcess, line: string): Promise<void> {
  const before = (await agent.output()).length;
  agent.child.kill('SIGHUP');
  await waitFor(
    async () => (await agent.output()).slice(before).includes(line),
    15_000,
    `"${line}"`,
    agent.output,
    agent.exited,
  );
}

/** The stick's job (the n-th) ends NO CHANGE and the agent does not release the stick (eject off). */
async function expectKept(world: AgentWorld, agent: AgentProcess, stick: MountedStick, n: number): Promise<void> {
  const ends = await waitForJobEnds(world, n, agent, 60_000);
  const end = ends[n - 1];
  expect(end?.result, await agent.output()).toBe('NO CHANGE');
  expect(await localLog(world, end?.id)).not.toContain('is released');
  expect(await stick.mounted()).toBe(true);
  await stick.unmount();
}

async function localLog(world: AgentWorld, id: string | undefined): Promise<string> {
  return readFile(join(world.stateDir, 'logs', `${id ?? ''}.log`), 'utf8');
}
