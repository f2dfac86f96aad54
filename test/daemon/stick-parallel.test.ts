import { describe, expect, it } from 'vitest';
import { activeEth1 } from '../support/device-observations.js';
import { stickFiles } from '../support/stick-workspace.js';
import { waitFor, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { readFatFile } from './fat-stick.js';

describe('mpprov run with several sticks at once', () => {
  const rig = useAgentRig();

  it('two sticks for two devices run side by side, each with its own log and result', { timeout: 60_000 }, async () => {
    // Restarts of different length: both devices are down together, but finish a second apart.
    const a = await rig.simulator({ restartMs: 2000 });
    const b = await rig.simulator({ restartMs: 3000 });
    const w = await rig.makeWorld();
    const agent = await rig.startAgent(w);
    const [{ image: imageA, stick: stickA }, { image: imageB, stick: stickB }] = await Promise.all([
      rig.insertStick(w, 'STICKA', stickFiles([{ name: 'mp-a', sim: a, address: '192.0.2.11' }])),
      rig.insertStick(w, 'STICKB', stickFiles([{ name: 'mp-b', sim: b, address: '192.0.2.12' }])),
    ]);
    // Both devices are restarting at the same moment: the jobs do not wait for each other.
    await waitFor(
      () => a.state().phase === 'restarting' && b.state().phase === 'restarting',
      20_000,
      'both devices to restart together',
      agent.output,
    );
    const ends = await waitForJobEnds(w, 2, agent);
    await Promise.all([stickA.unmount(), stickB.unmount()]);

    expect(
      ends.map((e) => e.result),
      await agent.output(),
    ).toEqual(['CHANGED', 'CHANGED']);
    expect(activeEth1(a)).toMatchObject({ address: '192.0.2.11' });
    expect(activeEth1(b)).toMatchObject({ address: '192.0.2.12' });
    const logA = (await readFatFile(imageA, 'usb.log')) ?? '';
    const logB = (await readFatFile(imageB, 'usb.log')) ?? '';
    expect(logA).toContain('[mp-a] step 4/4 done');
    expect(logA).not.toContain('mp-b');
    expect(logB).toContain('[mp-b] step 4/4 done');
    expect(logB).not.toContain('mp-a');
    expect(logA.trimEnd().split('\n').at(-1)).toMatch(
      /^RESULT: CHANGED {2}mp-a: changed and verified {2}\[j\d{8}-\d{6}-[0-9a-f]{4}\]$/,
    );
    expect(JSON.parse((await readFatFile(imageB, 'mpprov-result.json')) ?? '{}')).toMatchObject({
      result: 'CHANGED',
      devices: [{ device: 'mp-b' }],
    });
  });

  it(
    'two sticks for the same device: one job at a time, the second waits for the first',
    { timeout: 60_000 },
    async () => {
      const sim = await rig.simulator({ restartMs: 3000 });
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
        running.output,
      );
      const { image: imageB, stick: secondStick } = await rig.insertStick(
        w,
        'SECOND',
        stickFiles([{ name: 'mp1', sim, address: '192.0.2.22' }]),
      );
      const ends = await waitForJobEnds(w, 2, running, 40_000);
      await firstStick.unmount();
      await secondStick.unmount();

      expect(ends.map((e) => e.result)).toEqual(['CHANGED', 'CHANGED']);
      expect(sim.state().restarts).toBe(2);
      expect(activeEth1(sim)).toMatchObject({ address: '192.0.2.22' });
      const first = ends[0]?.id ?? '';
      const logB = (await readFatFile(imageB, 'usb.log')) ?? '';
      expect(logB).toContain(`waiting: ${sim.url} is being configured by job ${first}`);
    },
  );
});
