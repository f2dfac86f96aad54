import { describe, expect, it } from 'vitest';
import { stickFiles } from '../support/stick-workspace.js';
import { waitFor, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { readFatFile } from './fat-stick.js';

/**
 * The one-job-per-device lock is keyed by the device, not by how a stick spells its URL: one stick
 * naming https://127.0.0.1:P and another naming https://localhost:P (or https://[::ffff:127.0.0.1]:P,
 * which Node's URL parser turns into [::ffff:7f00:1]) wait for each other.
 */
describe('mpprov run: one device spelt two ways', () => {
  const rig = useAgentRig();

  it.each(['localhost', '[::ffff:127.0.0.1]'])(
    '127.0.0.1 and %s take one lock: the second job waits for the first',
    { timeout: 60_000 },
    async (spelling) => {
      const sim = await rig.simulator({ restartMs: 3000 });
      const byName = new URL(sim.url.replace('127.0.0.1', spelling)).origin;
      expect(byName).not.toBe(sim.url);
      const w = await rig.makeWorld();
      const running = await rig.startAgent(w);
      const { stick: firstStick } = await rig.insertStick(
        w,
        'FIRST',
        stickFiles([{ name: 'mp1', sim, address: '192.0.2.21' }]),
      );
      await waitFor(
        async () => (await running.output()).includes('[mp1] connecting to'),
        20_000,
        'the first job to reach the device',
        () => running.output(),
      );
      const second = stickFiles([{ name: 'mp1', sim, address: '192.0.2.22' }]);
      second['mpprov.yaml'] = (second['mpprov.yaml'] ?? '').replace(sim.url, byName);
      expect(second['mpprov.yaml']).toContain(`url: ${byName}`);
      const { image: imageB, stick: secondStick } = await rig.insertStick(w, 'SECOND', second);
      const ends = await waitForJobEnds(w, 2, running, 40_000);
      await firstStick.unmount();
      await secondStick.unmount();

      expect(
        ends.map((e) => e.result),
        await running.output(),
      ).toEqual(['CHANGED', 'CHANGED']);
      expect(sim.state().restarts).toBe(2);
      const logB = (await readFatFile(imageB, 'usb.log')) ?? '';
      expect(logB).toContain(`waiting: ${byName} is being configured by job ${ends[0]?.id ?? ''}`);
    },
  );
});
