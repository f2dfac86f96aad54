import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { activeEth1 } from '../support/device-observations.js';
import { stickFiles } from '../support/stick-workspace.js';
import { type AgentProcess, readJobs, waitFor, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { readFatFile } from './fat-stick.js';

/**
 * kill -9 of the agent at each point of a job (the crash matrix; the kill during the
 * restart itself is in agent-signals.test.ts): the next start reports the job and where it
 * stopped, the still-inserted stick is not started again by itself, its next insertion is told
 * about the crash and completes the job, and the device ends with nothing pending.
 */

interface KillPoint {
  name: string;
  /** Faults that hold the job still at the point, so the kill lands there whatever the machine's load. */
  faults: string[];
  /** The job is at the point. */
  reached: (sim: SimulatorHandle, output: string) => boolean;
  /** What the journal says about where the job stopped. */
  where: RegExp;
  /** The result of the next insertion. */
  next: 'CHANGED' | 'NO CHANGE';
  /** Faults set once the device starts its restart (requests before it must not be held). */
  onRestart?: string[];
  settleMs?: number;
  /** The stick's files: a static eth1 (default), or PEAP with a CA certificate to upload first. */
  stick?: 'static' | 'peap-ca';
  /** Holds every write to the stick (fusefat stopped) from the moment the job talks to the device. */
  hangStick?: boolean;
}

/** An interface view as settings only: the view's name for itself and what the device runs (in_use) left out. */
const settingsOf = (view: Record<string, unknown>[]): unknown =>
  view.map(({ name, families }) => ({
    name,
    families: Object.fromEntries(
      Object.entries((families ?? {}) as Record<string, Record<string, unknown>>).map(
        ([family, { in_use: _inUse, ...rest }]) => [family, rest],
      ),
    ),
  }));

const writes = (sim: SimulatorHandle): string[] =>
  sim
    .requests()
    .filter((r) => r.method !== 'GET')
    .map((r) => `${r.method} ${r.path}`);

const RADIUS_CA = fileURLToPath(new URL('../../profiles/certs/radius-ca.pem', import.meta.url));
const PEAP_SECRET = 'Kill-Matrix-Peap-71';

/** A static eth1 with PEAP whose server CA is on the stick: the job uploads it before the POST. */
function peapCaStick(sim: SimulatorHandle): Record<string, string | Buffer> {
  const files: Record<string, string | Buffer> = stickFiles([{ name: 'mp1', sim }]);
  const yaml = files['mpprov.yaml'];
  if (typeof yaml !== 'string') throw new Error('stickFiles writes mpprov.yaml as text');
  files['mpprov.yaml'] =
    `${yaml}        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${PEAP_SECRET}", ca_cert: certs/radius-ca.pem }\n`;
  files['certs/radius-ca.pem'] = readFileSync(RADIUS_CA);
  return files;
}

const POINTS: KillPoint[] = [
  {
    name: 'after the upload, before the POST',
    stick: 'peap-ca',
    // The stanza POST is held: the CA file is on the device (pending), the stanza is not.
    faults: ['latency=60s,times=1@POST /api/v1/interface/'],
    reached: (sim) => writes(sim).includes('POST /api/v1/interface/file/'),
    settleMs: 300,
    // Step 1/5 was the upload.
    where: /where it stopped: mp1: step 2\/5 POST eth1 inet \(create\) \(not finished\)/,
    next: 'CHANGED',
  },
  {
    name: 'after reading the stick, before the device answered',
    faults: ['latency=60s,times=5@GET /api/v1/interface/'],
    reached: (_sim, output) => output.includes('[mp1] connecting to'),
    where: /where it stopped: mp1: (connecting|reading)[^\n]*\(not finished\)/,
    next: 'CHANGED',
  },
  {
    name: 'after the POST, with the restart request under way',
    // The restart request is held before the device acts on it: the stanza is pending, not active.
    faults: ['latency=60s,times=1@PUT /api/v1/service/networking/'],
    reached: (sim, output) =>
      writes(sim).includes('POST /api/v1/interface/') && output.includes('step 3/4: restart networking'),
    // The journal line comes just before the request: let it leave.
    settleMs: 300,
    where: /where it stopped: mp1: step 3\/4 restart networking[^\n]*\(not finished\)/,
    next: 'CHANGED',
  },
  {
    name: 'after the restart, before the new settings were verified',
    faults: [],
    // Every read after the restart is held: the device runs the new settings, mpprov has not seen them.
    onRestart: ['latency=60s@GET /api/v1/interface/'],
    reached: (sim) => sim.state().restarts === 1 && sim.state().phase === 'up',
    // A held request is logged only when answered: give the agent time to send its first read.
    settleMs: 1000,
    where: /where it stopped: mp1: step [34]\/4 [^\n]*\(not finished\)/,
    next: 'NO CHANGE',
  },
  {
    name: 'while writing usb.log, after the device was configured',
    faults: [],
    hangStick: true,
    // Every step is done on the device; the job waits for the stick to take its log.
    reached: (sim, output) => sim.state().restarts === 1 && output.includes('step 4/4 done'),
    settleMs: 500,
    where:
      /where it stopped: mp1: changed: applied and verified: 1 stanza\(s\) added \(last step done: check the active view after the restart/,
    next: 'NO CHANGE',
  },
];

describe('the agent killed with SIGKILL at each point of a job', () => {
  const rig = useAgentRig();

  for (const point of POINTS) {
    it(
      `${point.name}: reported at the next start, told to the stick, completed at its next insertion`,
      { timeout: 120_000 },
      async () => {
        const { sim, world: w, agent } = await rig.startWithDevice({ restartMs: 300, faults: point.faults });
        const { image, stick } = await rig.insertStick(
          w,
          'KILL',
          point.stick === 'peap-ca' ? peapCaStick(sim) : stickFiles([{ name: 'mp1', sim }]),
        );
        if (point.hangStick === true) {
          await waitFor(
            async () => (await agent.output()).includes('[mp1] connecting to'),
            20_000,
            'the job to start',
            agent.output,
          );
          stick.pause();
        }
        if (point.onRestart !== undefined) {
          await waitFor(() => sim.state().phase === 'restarting', 20_000, 'the restart', agent.output);
          sim.setFaults(point.onRestart);
        }
        await waitFor(async () => point.reached(sim, await agent.output()), 20_000, point.name, agent.output);
        if (point.settleMs !== undefined) await new Promise((r) => setTimeout(r, point.settleMs));
        const killed = agent.stop('SIGKILL');
        // A write fusefat had taken before it stopped holds the killed agent's thread until answered.
        stick.resume();
        await killed;
        sim.setFaults([]);
        const [start] = (await readJobs(w.stateDir)).filter((r) => r.event === 'start');
        expect(start?.id).toBeDefined();

        const again: AgentProcess = await rig.startAgent(w);
        const journal = await again.output();
        expect(journal).toContain(
          `[${start?.id}] an earlier job did not finish: the agent stopped before the job finished (crash, kill or power loss)`,
        );
        expect(journal).toMatch(point.where);
        // Still inserted: not started again by itself (a stick that crashed a run could do it again).
        await waitFor(
          async () => (await again.output()).includes('this stick is not started'),
          15_000,
          'the refusal',
          again.output,
        );
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

        expect(ends[0]?.result, await again.output()).toBe(point.next);
        expect(activeEth1(sim)).toMatchObject({ method: 'static', address: '192.0.2.10' });
        // Nothing is left pending on the device: what the killed job posted was applied or replaced.
        expect(settingsOf(sim.state().interfaces.pending)).toEqual(settingsOf(sim.state().interfaces.active));
        const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
        expect(usbLog).toContain(`NOTE [${start?.id}] this job on the stick`);
        expect(usbLog).toMatch(point.where);
        expect(usbLog.trimEnd().split('\n').at(-1)).toMatch(
          new RegExp(`^RESULT: ${point.next}  mp1: .*  \\[${ends[0]?.id}\\]$`),
        );
        const history = await readJobs(w.stateDir);
        expect(history.find((r) => r.event === 'interrupted')).toMatchObject({ id: start?.id });
        expect((await again.stop()).code).toBe(0);
      },
    );
  }
});
