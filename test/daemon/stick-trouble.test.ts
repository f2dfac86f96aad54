import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { activeEth1 } from '../support/device-observations.js';
import { stickFiles } from '../support/stick-workspace.js';
import { waitFor, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { listFat, readFatFile } from './fat-stick.js';

describe('mpprov run when the stick misbehaves', () => {
  const rig = useAgentRig();

  it(
    'pulled during the device restart: the job completes, its log is kept locally and marked, and reaches the stick later',
    { timeout: 90_000 },
    async () => {
      // A restart long enough that the pull surely lands inside it.
      const { sim, world, agent: running } = await rig.startWithDevice({ restartMs: 3000 });
      const { image, mountPoint, fuseLog, stick } = await rig.insertStick(
        world,
        'PULLED',
        stickFiles([{ name: 'mp1', sim }]),
      );
      await waitFor(
        async () => (await running.output()).includes('step 3/4: restart networking'),
        20_000,
        'the restart step',
        running.output,
      );
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
      const again = await rig.mount(image, mountPoint, { logFile: fuseLog });
      const ends = await waitForJobEnds(world, 2, running);
      await again.unmount();
      expect(ends[1]?.result).toBe('NO CHANGE');
      expect(ends[1]?.stick_log).toBe('complete');
      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      expect(usbLog).toContain(
        `NOTE [${end?.id}] what follows could not be written to this stick at the time (the stick was removed); written late:`,
      );
      expect(usbLog).toContain(`RESULT: CHANGED  mp1: changed and verified  [${end?.id}]`);
      expect(usbLog.indexOf(`RESULT: CHANGED`)).toBeLessThan(usbLog.indexOf(`======== mpprov job ${ends[1]?.id}`));
      expect(usbLog.trimEnd().split('\n').at(-1)).toBe(
        `RESULT: NO CHANGE  mp1: already applied, no restart  [${ends[1]?.id}]`,
      );
    },
  );

  it('a read-only stick: the job runs, the log is kept locally and says why', { timeout: 60_000 }, async () => {
    const { sim, world, agent } = await rig.startWithDevice({ restartMs: 300 });
    const { image, stick } = await rig.insertStick(world, 'READONLY', stickFiles([{ name: 'mp1', sim }]), {
      readOnly: true,
    });
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
