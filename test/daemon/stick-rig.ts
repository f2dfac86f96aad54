import { afterEach, beforeAll } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import type { AgentProcess, AgentWorld } from './agent-process.js';
import { type MountedStick, requireFatTools } from './fat-stick.js';

/**
 * What a FAT-stick test starts and must always take down again, in this order: the sticks
 * (unmounted), the agent (killed), the simulated devices, then the temporary world.
 */
export interface StickRig {
  sims: SimulatorHandle[];
  sticks: MountedStick[];
  world: AgentWorld | undefined;
  agent: AgentProcess | undefined;
}

/** Registers the FAT tools check and the cleanup for a describe block; tests fill in the rig. */
export function useStickRig(): StickRig {
  const rig: StickRig = { sims: [], sticks: [], world: undefined, agent: undefined };
  beforeAll(() => requireFatTools());
  afterEach(async () => {
    for (const stick of rig.sticks) await stick.unmount().catch(() => undefined);
    await rig.agent?.stop('SIGKILL');
    for (const sim of rig.sims) await sim.close();
    await rig.world?.cleanup();
    rig.sims = [];
    rig.sticks = [];
    rig.agent = undefined;
    rig.world = undefined;
  });
  return rig;
}
