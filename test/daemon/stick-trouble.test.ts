import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { useStickRig } from './stick-rig.js';
import { makeWorld, startAgent, waitFor, waitForJobEnds } from './agent-process.js';
import { listFat, makeFatImage, type MountedStick, mountFat, readFatFile, requireFatTools } from './fat-stick.js';
import { activeEth1, stickFiles } from './stick-config.js';

describe('mpprov run when the stick misbehaves', () => {
  const rig = useStickRig();

  it('pulled during the device restart: the job completes, its log is kept locally and marked, and reaches the stick later', { timeout: 90_000 }, async () => {
    // A restart long enough that the pull surely lands inside it.
    const sim = await startSimulator({ restartMs: 3000 });
    rig.sims.push(sim);
    const world = (rig.world = await makeWorld());
    const running = (rig.agent = await startAgent(world));
    const image = join(world.dir, 'stick.img');
    await makeFatImage(image, 'PULLED', stickFiles([{ name: 'mp1', sim }]));
    const mountPoint = join(world.mediaRoot, 'PULLED');
    const fuseLog = join(world.dir, 'fusefat.log');
    const stick = await mountFat(image, mountPoint, { logFile: fuseLog });
    rig.sticks.push(stick);
    await waitFor(async () => (await running.output()).includes('step 3/4: restart networking'), 20_000, 'the restart step', running.output);
    await stick.pull();

    const [end] = await waitForJobEnds(world, 1, running);
    expect(end?.result).toBe('CHANGED');
    expect(end?.stick_log).toBe('removed');
    expect(activeEth1(sim)).toMatchObject({ method: 'static', address: '192.0.2.10', gateway: '192.0.2.1' });
    const local = await readFile(join(world.stateDir, 'logs', `${end?.id}.log`), 'utf8');
    expect(local).toContain('[mp1] step 4/4 done');
    expect(local).toMatch(/usb\.log: the stick was removed \(.*\); this log was kept locally in .*\.log/);
    expect(local).toContain('usb.log is incomplete: the stick was removed');
    expect(local).toContain(`RESULT: CHANGED  mp1: changed and verified  [${end?.id}]`);
    // Nothing was written into the empty mount folder on the laptop's own disk.
    expect((await import('node:fs')).readdirSync(mountPoint)).toEqual([]);

    // The same stick again: NO CHANGE, and usb.log first receives what it missed.
    const again = await mountFat(image, mountPoint, { logFile: fuseLog });
    rig.sticks.push(again);
    const ends = await waitForJobEnds(world, 2, running);
    await again.unmount();
    expect(ends[1]?.result).toBe('NO CHANGE');
    expect(ends[1]?.stick_log).toBe('complete');
    const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
    expect(usbLog).toContain(`NOTE [${end?.id}] what follows could not be written to this stick at the time (the stick was removed); written late:`);
    expect(usbLog).toContain(`RESULT: CHANGED  mp1: changed and verified  [${end?.id}]`);
    expect(usbLog.indexOf(`RESULT: CHANGED`)).toBeLessThan(usbLog.indexOf(`======== mpprov job ${ends[1]?.id}`));
    expect(usbLog.trimEnd().split('\n').at(-1)).toBe(`RESULT: NO CHANGE  mp1: already applied, no restart  [${ends[1]?.id}]`);
  });

  it('a read-only stick: the job runs, the log is kept locally and says why', { timeout: 60_000 }, async () => {
    const sim = await startSimulator({ restartMs: 300 });
    rig.sims.push(sim);
    const world = (rig.world = await makeWorld());
    const agent = (rig.agent = await startAgent(world));
    const image = join(world.dir, 'stick.img');
    await makeFatImage(image, 'READONLY', stickFiles([{ name: 'mp1', sim }]));
    const stick = await mountFat(image, join(world.mediaRoot, 'READONLY'), { readOnly: true, logFile: join(world.dir, 'fusefat.log') });
    rig.sticks.push(stick);
    const [end] = await waitForJobEnds(world, 1, agent);
    await stick.unmount();

    expect(end?.result).toBe('CHANGED');
    expect(end?.stick_log).toBe('read-only');
    expect(activeEth1(sim)).toMatchObject({ method: 'static', address: '192.0.2.10' });
    const local = await readFile(join(world.stateDir, 'logs', `${end?.id}.log`), 'utf8');
    expect(local).toMatch(/usb\.log: the stick is read-only \(usb\.log: E[A-Z]+\); this log was kept locally in /);
    expect(local).toContain(`RESULT: CHANGED  mp1: changed and verified  [${end?.id}]`);
    expect(await agent.output()).toContain('the stick is read-only');
    expect(await readFatFile(image, 'usb.log')).toBeUndefined();
    expect(await listFat(image)).not.toMatch(/result/i);
  });
});
