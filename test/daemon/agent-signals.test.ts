import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { activeEth1 } from '../support/device-observations.js';
import { runCli } from '../support/run-cli.js';
import { stickFiles } from '../support/stick-workspace.js';
import { readJobs, waitFor, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { readFatFile } from './fat-stick.js';

describe('mpprov run and signals', () => {
  const rig = useAgentRig();

  it(
    'SIGTERM during a job: the request under way finishes, no restart starts, the agent exits, and the next start reports it',
    { timeout: 90_000 },
    async () => {
      // The first POST takes 2 s: SIGTERM lands while it is under way.
      const {
        sim,
        world: w,
        agent,
      } = await rig.startWithDevice({ restartMs: 300, faults: ['latency=2s,times=1@POST /api/v1/interface/'] });
      const inserted = await rig.insertStick(w, 'TERM', stickFiles([{ name: 'mp1', sim }]));
      const { image, mountPoint, fuseLog } = inserted;
      let stick = inserted.stick;
      await waitFor(
        async () => (await agent.output()).includes('step 1/4: POST eth1 inet (create)'),
        20_000,
        'the first step',
        agent.output,
      );

      agent.child.kill('SIGTERM');
      let exit: { code: number | null } | undefined;
      void agent.exited.then((e) => (exit = e));
      await waitFor(() => exit !== undefined, 10_000, 'the agent to exit within 10 s of SIGTERM', agent.output);
      expect(exit?.code).toBe(0);

      // The POST under way was answered; nothing after it was sent, above all no restart.
      const requests = sim.requests().filter((r) => r.method !== 'GET');
      expect(requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['POST /api/v1/interface/ 200']);
      expect(sim.state().restarts).toBe(0);

      const jobs = await readJobs(w.stateDir);
      const end = jobs.find((r) => r.event === 'end');
      expect(end).toMatchObject({ result: 'FAILED', stopped: true });
      const markers = await readdir(join(w.stateDir, 'running'));
      expect(markers).toEqual([`${end?.id}.json`]);
      const marker = JSON.parse(await readFile(join(w.stateDir, 'running', markers[0] ?? ''), 'utf8')) as {
        stoppedBy?: string;
        devices?: Record<string, { at: string }>;
      };
      expect(marker.stoppedBy).toBe('SIGTERM');
      expect(marker.devices?.mp1?.at).toContain('failed: stopped before "check the pending view');
      await stick.unmount();
      const firstLog = (await readFatFile(image, 'usb.log')) ?? '';
      expect(firstLog).toContain('the agent is stopping (SIGTERM): no networking restart is started after the signal');
      expect(firstLog.trimEnd().split('\n').at(-1)).toBe(
        `RESULT: FAILED  mp1: failed, stopped by the agent's shutdown after "POST eth1 inet (create)"  [${end?.id}]`,
      );

      // Next start: reported in the journal, then in the stick's usb.log when the stick is seen.
      const again = await rig.startAgent(w);
      expect(await again.output()).toMatch(
        new RegExp(
          `\\[${end?.id}\\] an earlier job did not finish: the agent was stopped by SIGTERM during the job; where it stopped: mp1: failed: stopped before "check the pending view holds 1 stanza change\\(s\\)" because the agent is shutting down; nothing after that step was sent \\(last step done: POST eth1 inet \\(create\\)\\)`,
        ),
      );
      stick = await rig.mount(image, mountPoint, { logFile: fuseLog });
      const ends = await waitForJobEnds(w, 2, again);
      await stick.unmount();
      expect(ends[1]?.result, await again.output()).toBe('CHANGED');
      expect(activeEth1(sim)).toMatchObject({ method: 'static', address: '192.0.2.10' });
      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      const second = usbLog.slice(firstLog.length);
      expect(second).toMatch(
        new RegExp(
          `^\\nNOTE \\[${end?.id}\\] this job on the stick, started .*, was interrupted: the agent was stopped by SIGTERM during the job\\.`,
        ),
      );
      expect(second).toContain(
        `NOTE [${end?.id}] where it stopped: mp1: failed: stopped before "check the pending view holds 1 stanza change(s)"`,
      );
      expect(second).toContain(`======== mpprov job ${ends[1]?.id} ========`);

      // mpprov status tells the same story.
      const status = await runCli(['status', '--state-dir', w.stateDir]);
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(new RegExp(`${ends[1]?.id} .* stick TERM +CHANGED +mp1: changed and verified`));
      expect(status.stdout).toMatch(
        new RegExp(
          `${end?.id} .* stick TERM +FAILED +mp1: failed, stopped by the agent's shutdown.*\\(interrupted: the agent was stopped by SIGTERM during the job\\)`,
        ),
      );
      expect((await again.stop()).code).toBe(0);
    },
  );

  it(
    'killed during the restart (a crash): the next start reports where the job stopped, and the stick is told',
    { timeout: 90_000 },
    async () => {
      const { sim, world: w, agent } = await rig.startWithDevice({ restartMs: 2000 });
      const { image, stick } = await rig.insertStick(w, 'CRASH', stickFiles([{ name: 'mp1', sim }]));
      await waitFor(() => sim.state().phase === 'restarting', 20_000, 'the device to restart', agent.output);
      await agent.stop('SIGKILL');
      const [start] = (await readJobs(w.stateDir)).filter((r) => r.event === 'start');
      await waitFor(() => sim.state().phase === 'up' && sim.state().restarts === 1, 20_000, 'the device to come back');

      // The stick is still in: the start-up scan finds it and does not start it again (a stick that
      // ended a run unfinished could crash every restart); its usb.log says so.
      const again = await rig.startAgent(w);
      expect(await again.output()).toContain(
        `[${start?.id}] an earlier job did not finish: the agent stopped before the job finished (crash, kill or power loss); where it stopped: mp1: step 3/4 restart networking (1 stanza change(s)) (not finished)`,
      );
      await waitFor(
        async () => (await again.output()).includes('this stick is not started'),
        15_000,
        'the refusal',
        again.output,
      );
      // The technician takes it out and puts it back: now it runs, and is told about the crash first.
      await stick.unmount();
      await waitFor(
        async () => (await again.output()).includes('its next insertion runs again'),
        15_000,
        'the stick to be seen gone',
        again.output,
      );
      const reinserted = await rig.mount(image, stick.mountPoint, { logFile: `${image}.fuse2.log` });
      const ends = await waitForJobEnds(w, 1, again);
      await reinserted.unmount();
      expect(ends[0]?.result).toBe('NO CHANGE');
      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      expect(usbLog).toContain(
        `NOTE [${start?.id}] where it stopped: mp1: step 3/4 restart networking (1 stanza change(s)) (not finished)`,
      );
      expect(usbLog.trimEnd().split('\n').at(-1)).toBe(
        `RESULT: NO CHANGE  mp1: already applied, no restart  [${ends[0]?.id}]`,
      );
      const history = await readJobs(w.stateDir);
      expect(history.find((r) => r.event === 'interrupted')).toMatchObject({
        id: start?.id,
        reason: 'the agent stopped before the job finished (crash, kill or power loss)',
      });
    },
  );
});
