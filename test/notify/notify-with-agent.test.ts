import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useAgentRig } from '../daemon/agent-rig.js';
import { waitFor, waitForJobEnds } from '../daemon/agent-process.js';
import { cliPath, useProcesses } from '../support/run-cli.js';
import { PEAP_PASSWORD, stickFiles } from '../support/stick-workspace.js';
import { fakeNotifySend } from './notify-rig.js';

/**
 * The whole chain a technician sees at a desktop: the agent (a child process) provisions a real
 * FAT stick and writes its status file; `mpprov notify` (another child process) follows that file
 * and calls notify-send (a fake first on PATH that records its arguments) once, with the words.
 */

describe('mpprov notify beside the agent', () => {
  const rig = useAgentRig();
  const processes = useProcesses();

  it(
    'a stick provisioned by the agent gives one notification: configured, safe to remove',
    { timeout: 120_000 },
    async () => {
      const { sim, world, agent } = await rig.startWithDevice({ restartMs: 300 });
      const statusFile = join(world.dir, 'run', 'status.json');
      const fake = await fakeNotifySend();
      const notify = await processes.startNode([cliPath, 'notify', '--status-file', statusFile], {
        env: { PATH: `${fake.bin}:/usr/bin:/bin` },
      });

      await rig.insertStick(world, 'MPSTICK', stickFiles([{ name: 'branch-12-mp1', sim }]));
      const [end] = await waitForJobEnds(world, 1, agent);
      expect(end?.result).toBe('CHANGED');
      await waitFor(
        async () => (await fake.calls()).length >= 1,
        15_000,
        'the notification',
        () => Promise.resolve(notify.output()),
        notify.exited,
      );

      expect(await fake.calls()).toEqual([
        [
          '--app-name=mpprov',
          '--urgency=normal',
          '--',
          'mpprov',
          'Stick MPSTICK: branch-12-mp1 configured, safe to remove',
        ],
      ]);
      const everything = `${notify.output()}${JSON.stringify(await fake.calls())}`;
      for (const secret of [sim.password, PEAP_PASSWORD]) expect(everything.includes(secret)).toBe(false);
      expect(await notify.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    },
  );
});
