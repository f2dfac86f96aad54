import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { useStickRig } from './stick-rig.js';
import { makeWorld, startAgent, waitFor, waitForJobEnds } from './agent-process.js';
import { makeFatImage, type MountedStick, mountFat, readFatFile, requireFatTools } from './fat-stick.js';
import { activeEth1, stickFiles } from './stick-config.js';

describe('mpprov run with several sticks at once', () => {
  const rig = useStickRig();

  it('two sticks for two devices run side by side, each with its own log and result', { timeout: 60_000 }, async () => {
    // Restarts of different length: both devices are down together, but finish a second apart.
    const a = await startSimulator({ restartMs: 2000 });
    const b = await startSimulator({ restartMs: 3000 });
    rig.sims.push(a, b);
    const w = (rig.world = await makeWorld());
    const agent = (rig.agent = await startAgent(w));
    const imageA = join(w.dir, 'a.img');
    const imageB = join(w.dir, 'b.img');
    await makeFatImage(imageA, 'STICKA', stickFiles([{ name: 'mp-a', sim: a, address: '192.0.2.11' }]));
    await makeFatImage(imageB, 'STICKB', stickFiles([{ name: 'mp-b', sim: b, address: '192.0.2.12' }]));
    const [stickA, stickB] = await Promise.all([
      mountFat(imageA, join(w.mediaRoot, 'STICKA'), { logFile: join(w.dir, 'fusefat-a.log') }),
      mountFat(imageB, join(w.mediaRoot, 'STICKB'), { logFile: join(w.dir, 'fusefat-b.log') }),
    ]);
    rig.sticks.push(stickA, stickB);
    // Both devices are restarting at the same moment: the jobs do not wait for each other.
    await waitFor(() => a.state().phase === 'restarting' && b.state().phase === 'restarting', 20_000, 'both devices to restart together', agent.output);
    const ends = await waitForJobEnds(w, 2, agent);
    await Promise.all([stickA.unmount(), stickB.unmount()]);

    expect(ends.map((e) => e.result), await agent.output()).toEqual(['CHANGED', 'CHANGED']);
    expect(activeEth1(a)).toMatchObject({ address: '192.0.2.11' });
    expect(activeEth1(b)).toMatchObject({ address: '192.0.2.12' });
    const logA = (await readFatFile(imageA, 'usb.log')) ?? '';
    const logB = (await readFatFile(imageB, 'usb.log')) ?? '';
    expect(logA).toContain('[mp-a] step 4/4 done');
    expect(logA).not.toContain('mp-b');
    expect(logB).toContain('[mp-b] step 4/4 done');
    expect(logB).not.toContain('mp-a');
    expect(logA.trimEnd().split('\n').at(-1)).toMatch(/^RESULT: CHANGED {2}mp-a: changed and verified {2}\[j\d{8}-\d{6}-[0-9a-f]{4}\]$/);
    expect(JSON.parse((await readFatFile(imageB, 'mpprov-result.json')) ?? '{}')).toMatchObject({ result: 'CHANGED', devices: [{ device: 'mp-b' }] });
  });

  it('two sticks for the same device: one job at a time, the second waits for the first', { timeout: 60_000 }, async () => {
    const sim = await startSimulator({ restartMs: 3000 });
    rig.sims.push(sim);
    const w = (rig.world = await makeWorld());
    const running = (rig.agent = await startAgent(w));
    const imageA = join(w.dir, 'a.img');
    const imageB = join(w.dir, 'b.img');
    await makeFatImage(imageA, 'FIRST', stickFiles([{ name: 'mp1', sim, address: '192.0.2.21' }]));
    await makeFatImage(imageB, 'SECOND', stickFiles([{ name: 'mp1', sim, address: '192.0.2.22' }]));
    rig.sticks.push(await mountFat(imageA, join(w.mediaRoot, 'FIRST'), { logFile: join(w.dir, 'fusefat-a.log') }));
    await waitFor(async () => (await running.output()).includes('[mp1] connecting to'), 20_000, 'the first job to reach the device', running.output);
    rig.sticks.push(await mountFat(imageB, join(w.mediaRoot, 'SECOND'), { logFile: join(w.dir, 'fusefat-b.log') }));
    const ends = await waitForJobEnds(w, 2, running, 40_000);
    for (const stick of rig.sticks) await stick.unmount();

    expect(ends.map((e) => e.result)).toEqual(['CHANGED', 'CHANGED']);
    expect(sim.state().restarts).toBe(2);
    expect(activeEth1(sim)).toMatchObject({ address: '192.0.2.22' });
    const first = ends[0]?.id ?? '';
    const logB = (await readFatFile(imageB, 'usb.log')) ?? '';
    expect(logB).toContain(`waiting: ${sim.url} is being configured by job ${first}`);
  });
});
