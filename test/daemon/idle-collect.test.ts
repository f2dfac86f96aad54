import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stickYaml } from '../support/stick-workspace.js';
import { waitFor, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';

/**
 * The agent as the unit runs it (node with --expose-gc) collects its jobs' garbage once it has no
 * job left (src/agent/idle-collect.ts): without that, back-to-back jobs grew its RSS by ~0.3 MiB
 * each. The debug line is how the collection shows from outside.
 */
describe('mpprov run with gc exposed', () => {
  const rig = useAgentRig({ fatSticks: false });

  it('collects the heap once its job has ended and it is idle', { timeout: 60_000 }, async () => {
    const sim = await rig.simulator({ restartMs: 200 });
    const world = await rig.makeWorld({
      agentYaml: (w) =>
        `version: 1\nmedia_roots: [${w.mediaRoot}]\nprofiles_dirs: [${w.profilesDir}]\nstate_dir: ${w.stateDir}\nlog_level: debug\ntimeouts: { request_s: 5, restart_s: 30 }\n`,
    });
    const agent = await rig.startAgent(world, { NODE_OPTIONS: '--expose-gc' });
    expect(await agent.output()).not.toContain('idle: heap collected');
    await mkdir(join(world.profilesDir, 'secrets'), { recursive: true });
    await writeFile(join(world.profilesDir, 'secrets', 'mp1.pw'), `${sim.password}\n`);
    await writeFile(join(world.profilesDir, '.p.yaml.tmp'), stickYaml([{ name: 'mp1', sim }]));
    await rename(join(world.profilesDir, '.p.yaml.tmp'), join(world.profilesDir, 'p.yaml'));
    const [end] = await waitForJobEnds(world, 1, agent);
    expect(end?.result).toBe('CHANGED');
    await waitFor(
      async () => (await agent.output()).includes('idle: heap collected'),
      20_000,
      'the idle collection',
      agent.output,
    );
    expect(await agent.output()).toMatch(/idle: heap collected, \d+\.\d -> \d+\.\d MiB in use \(\d+ ms\)/);
  });
});
