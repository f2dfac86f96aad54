import { describe, expect, it } from 'vitest';
import { activeEth1 } from '../support/device-observations.js';
import { stickFiles } from '../support/stick-workspace.js';
import { waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { readFatFile } from './fat-stick.js';

/** A stick written on Windows: every name upper case on the FAT image (mtools), the agent a child process. */
describe('an upper-case FAT stick', () => {
  const rig = useAgentRig();

  it('MPPROV.YAML and SECRETS/MP1.PW work exactly like their lower-case spellings', { timeout: 60_000 }, async () => {
    const { sim, world, agent } = await rig.startWithDevice({ restartMs: 300 });
    const lower = stickFiles([{ name: 'mp1', sim }]);
    expect(Object.keys(lower).sort()).toEqual(['mpprov.yaml', 'secrets/mp1.pw']);
    const upper = Object.fromEntries(Object.entries(lower).map(([path, content]) => [path.toUpperCase(), content]));
    const { image } = await rig.insertStick(world, 'WINSTICK', upper);
    const [end] = await waitForJobEnds(world, 1, agent);
    expect(end?.result, await agent.output()).toBe('CHANGED');
    expect(activeEth1(sim)).toMatchObject({ method: 'static', address: '192.0.2.10' });
    const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
    // The configuration once, the password file and the volume label's 0-byte entry; nothing "does not exist".
    // The configuration and the one file it names: nothing unmentioned (not the volume label's entry) is read.
    expect(usbLog).toContain('read the stick: 2 file(s)');
    expect(usbLog).not.toContain('does not exist');
    expect(await readFatFile(image, 'MPPROV-OK.TXT')).toContain('mpprov CHANGED');
  });
});
