import { join } from 'node:path';
import { afterEach, beforeAll } from 'vitest';
import type { SimulatorHandle, SimulatorOptions } from '../../src/simulator/index.js';
import { simulatorPool } from '../support/simulator-fixture.js';
import { type AgentProcess, type AgentWorld, makeWorld, startAgent } from './agent-process.js';
import { makeFatImage, type MountedStick, mountFat, requireFatTools } from './fat-stick.js';

/**
 * What a daemon test starts, and takes down again after each test whatever happened, in this
 * order: the sticks (unmounted), the agents (killed), the simulated devices, then the temporary
 * world. A test asks the rig for each part, so nothing it starts can be forgotten.
 */
export interface AgentRig {
  /** A simulated device (test/support/simulator-fixture.ts). */
  simulator(options?: SimulatorOptions): Promise<SimulatorHandle>;
  /** The test's world: agent.yaml, media root, profiles and state folders. */
  makeWorld(options?: Parameters<typeof makeWorld>[0]): Promise<AgentWorld>;
  /** `mpprov run` in that world; a test may start it again after a stop. */
  startAgent(world: AgentWorld, env?: NodeJS.ProcessEnv): Promise<AgentProcess>;
  /** What most tests start with: one simulated device, and the agent running in a world of its own. */
  startWithDevice(
    options?: SimulatorOptions,
  ): Promise<{ sim: SimulatorHandle; world: AgentWorld; agent: AgentProcess }>;
  /** A FAT image `<label>.img` in the world with these files, mounted at the media root as `<label>`. */
  insertStick(
    world: AgentWorld,
    label: string,
    files: Record<string, string | Buffer>,
    options?: { readOnly?: boolean },
  ): Promise<InsertedStick>;
  /** Mounts an image (again), as insertStick does. */
  mount(image: string, mountPoint: string, options: { readOnly?: boolean; logFile: string }): Promise<MountedStick>;
}

export interface InsertedStick {
  image: string;
  mountPoint: string;
  /** Where fusefat writes its debug output; mount the image again with it. */
  fuseLog: string;
  stick: MountedStick;
}

/** Registers the rig's cleanup for a describe block, and the FAT tools check unless `fatSticks` is false. */
export function useAgentRig(options: { fatSticks?: boolean } = {}): AgentRig {
  const sims = simulatorPool();
  let sticks: MountedStick[] = [];
  let agents: AgentProcess[] = [];
  let worlds: AgentWorld[] = [];
  if (options.fatSticks !== false) beforeAll(() => requireFatTools());
  afterEach(async () => {
    for (const stick of sticks) await stick.unmount().catch(() => undefined);
    for (const agent of agents) await agent.stop('SIGKILL');
    await sims.closeAll();
    for (const world of worlds) await world.cleanup();
    sticks = [];
    agents = [];
    worlds = [];
  });

  const mount: AgentRig['mount'] = async (image, mountPoint, mountOptions) => {
    const stick = await mountFat(image, mountPoint, mountOptions);
    sticks.push(stick);
    return stick;
  };
  const rig: AgentRig = {
    simulator: (simulatorOptions) => sims.start(simulatorOptions),
    async makeWorld(worldOptions) {
      const world = await makeWorld(worldOptions);
      worlds.push(world);
      return world;
    },
    async startAgent(world, env) {
      const agent = await startAgent(world, env);
      agents.push(agent);
      return agent;
    },
    async startWithDevice(simulatorOptions) {
      const sim = await rig.simulator(simulatorOptions);
      const world = await rig.makeWorld();
      return { sim, world, agent: await rig.startAgent(world) };
    },
    async insertStick(world, label, files, stickOptions = {}) {
      const image = join(world.dir, `${label.toLowerCase()}.img`);
      const mountPoint = join(world.mediaRoot, label);
      const fuseLog = join(world.dir, `fusefat-${label.toLowerCase()}.log`);
      await makeFatImage(image, label, files);
      const stick = await mount(image, mountPoint, { readOnly: stickOptions.readOnly === true, logFile: fuseLog });
      return { image, mountPoint, fuseLog, stick };
    },
    mount,
  };
  return rig;
}
