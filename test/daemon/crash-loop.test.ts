import { describe, expect, it } from 'vitest';
import { stickFiles } from '../support/stick-workspace.js';
import { startAgent, waitFor } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { readFatFile } from './fat-stick.js';

/**
 * A stick whose job ended the agent's run (here: the process is killed mid-job, as a fatal crash
 * would end it) is not started again at the next start while it stays inserted: no crash loop.
 * The refusal is a sentence in the journal and on the stick's usb.log.
 */
describe('mpprov run after a job took the agent down', () => {
  const rig = useAgentRig();

  it('refuses the still-inserted stick once, saying why, and sends nothing', { timeout: 60_000 }, async () => {
    const sim = await rig.simulator({ restartMs: 8000 });
    const w = await rig.makeWorld();
    const first = await rig.startAgent(w);
    const { image, stick } = await rig.insertStick(
      w,
      'CRASHER',
      stickFiles([{ name: 'mp1', sim, address: '192.0.2.31' }]),
    );
    await waitFor(() => sim.state().phase === 'restarting', 20_000, 'the job to restart the device', first.output);
    expect((await first.stop('SIGKILL')).signal).toBe('SIGKILL');
    const requestsBefore = sim.requests().length;

    const second = await startAgent(w);
    await waitFor(
      async () => (await second.output()).includes('this stick is not started'),
      15_000,
      'the refusal',
      second.output,
    );
    const journal = await second.output();
    expect(journal).toMatch(
      /stick at \S+: this stick is not started: its job j\d{8}-\d{6}-[0-9a-f]{4} ended the agent's previous run without finishing \(crash, kill or power loss\)/,
    );
    expect((await second.stop('SIGTERM')).code).toBe(0);
    await stick.unmount();
    expect(sim.requests().length).toBe(requestsBefore);
    const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
    expect(usbLog, journal).toContain('this stick is not started: its job j');
    expect(usbLog).toContain('check it with mpprov validate');
  });
});
