import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { activeEth1 } from '../support/device-observations.js';
import { stickFiles } from '../support/stick-workspace.js';
import { waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { makeFatImage, readFatFile } from './fat-stick.js';

/**
 * Two sticks naming the same device, inserted at the same moment (stick-parallel.test.ts inserts
 * the second once the first has reached the device): one job at a time per device. Both jobs
 * complete, each stick says its own result, and in the device's request log the second job's
 * changes all come after the first job's, which had restarted and verified the device by then.
 */
describe('mpprov run: two sticks for one device inserted together', () => {
  const rig = useAgentRig();

  it(
    'one job at a time on the device: both complete, each stick right, no interleaved change',
    { timeout: 120_000 },
    async () => {
      // A long restart: whichever job goes first holds the device for seconds.
      const sim = await rig.simulator({ restartMs: 3000 });
      const world = await rig.makeWorld();
      const agent = await rig.startAgent(world);
      const sticks = [
        { label: 'STICKA', address: '192.0.2.31' },
        { label: 'STICKB', address: '192.0.2.32' },
      ].map((s) => ({
        ...s,
        image: join(world.dir, `${s.label.toLowerCase()}.img`),
        mountPoint: join(world.mediaRoot, s.label),
      }));
      // The images first, then both mounts at once.
      for (const s of sticks)
        await makeFatImage(s.image, s.label, stickFiles([{ name: 'mp1', sim, address: s.address }]));
      const mounted = await Promise.all(
        sticks.map((s) => rig.mount(s.image, s.mountPoint, { logFile: join(world.dir, `fuse-${s.label}.log`) })),
      );

      const ends = await waitForJobEnds(world, 2, agent, 90_000);
      // The agent releases each stick once its result is written.
      await Promise.all(mounted.map((m) => m.exited));
      expect(
        ends.map((e) => e.result),
        await agent.output(),
      ).toEqual(['CHANGED', 'CHANGED']);
      expect(sim.state().restarts).toBe(2);

      // Each stick: its own job, its own result; exactly one of them waited for the other.
      const logs = await Promise.all(sticks.map(async (s) => (await readFatFile(s.image, 'usb.log')) ?? ''));
      const ids = logs.map((log) => /^======== mpprov job (\S+) ========$/m.exec(log)?.[1] ?? '');
      expect(new Set(ids)).toEqual(new Set(ends.map((e) => e.id)));
      const waited = logs.map((log, i) =>
        log.includes(`waiting: ${sim.url} is being configured by job ${ids[1 - i] ?? ''}`),
      );
      expect(waited.filter(Boolean)).toHaveLength(1);
      const [first, second] = waited[0] === true ? [1, 0] : [0, 1];
      for (const [i, log] of logs.entries()) {
        expect(log.trimEnd().split('\n').at(-1)).toBe(`RESULT: CHANGED  mp1: changed and verified  [${ids[i] ?? ''}]`);
        const result = JSON.parse((await readFatFile(sticks[i]?.image ?? '', 'mpprov-result.json')) ?? '{}') as unknown;
        expect(result).toMatchObject({
          job: ids[i],
          result: 'CHANGED',
          source: { label: sticks[i]?.label },
          devices: [{ device: 'mp1', outcome: 'changed' }],
        });
      }
      // The second job read the device after the first had changed it: a create, then an update.
      expect(logs[first]).toMatch(/\[mp1\] step 1\/\d: POST eth1 inet \(create\)/);
      expect(logs[second]).toMatch(/\[mp1\] step 1\/\d: POST eth1 inet \(update\)/);
      expect(activeEth1(sim)).toMatchObject({ address: sticks[second]?.address });

      // The device's log: the first job's change and restart, then the second's, never mixed.
      const writes = sim
        .requests()
        .filter((r) => r.method !== 'GET')
        .map((r) =>
          `${r.method} ${r.path} ${(r.body as { address?: string } | null | undefined)?.address ?? ''}`.trim(),
        );
      const restart = 'PUT /api/v1/service/networking/';
      expect(writes).toEqual([
        `POST /api/v1/interface/ ${sticks[first]?.address}`,
        restart,
        `POST /api/v1/interface/ ${sticks[second]?.address}`,
        restart,
      ]);
    },
  );
});
