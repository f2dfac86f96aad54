import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PEAP_PASSWORD, stickFiles } from '../support/stick-workspace.js';
import { waitFor, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { readFatFile } from './fat-stick.js';

/**
 * The stick says when it is done without a terminal: MPPROV-BUSY.TXT while the job runs, exactly
 * one MPPROV-OK/NO-CHANGE/FAILED.TXT at the end, and the agent unmounts it itself (when_done.eject).
 * Real FAT images through fusefat, the agent as a child process.
 */

const run = promisify(execFile);

/** The names at the image's root, as mtools lists them (after unmounting). */
async function rootNames(image: string): Promise<string[]> {
  const { stdout } = await run('mdir', ['-i', image, '-b', '::'], {
    env: { ...process.env, MTOOLS_SKIP_CHECK: '1' },
    encoding: 'utf8',
  });
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('::/'))
    .map((l) => l.slice(3));
}

const resultTxts = (names: readonly string[]): string[] => names.filter((n) => /^MPPROV-.*\.TXT$/i.test(n)).sort();

const STILL_RUNNING =
  /^\d\d:\d\d:\d\d\.\d{3} \[j[\d-]+[0-9a-f]{4}\] the job is still running: if this is the last line, the stick was removed before the job ended; the result is written to this stick when it is next inserted$/;

describe('the stick says when it is done, and the agent releases it', () => {
  const rig = useAgentRig();

  it(
    'a full job: the agent unmounts the stick itself, which holds MPPROV-OK.TXT alone, with no secret',
    { timeout: 60_000 },
    async () => {
      const { sim, world, agent } = await rig.startWithDevice({ restartMs: 300 });
      const files = {
        ...stickFiles([{ name: 'mp1', sim, dot1x: true }]),
        'MPPROV-FAILED.TXT': 'from an earlier run\r\n',
        'MPPROV-BUSY.TXT': 'left over\r\n',
      };
      const { image, stick, mountPoint } = await rig.insertStick(world, 'MPSTICK', files);

      const [end] = await waitForJobEnds(world, 1, agent);
      expect(end?.result, await agent.output()).toBe('CHANGED');
      // Unmounted by the agent, not by the test: fusefat exits on its own.
      await Promise.race([
        stick.exited,
        new Promise((_, reject) => setTimeout(() => reject(new Error('the agent did not unmount the stick')), 10_000)),
      ]);
      expect(await stick.mounted()).toBe(false);
      expect(await agent.output()).toContain(`the stick at ${mountPoint} is released (fusermount -u): safe to remove`);

      expect(resultTxts(await rootNames(image))).toEqual(['MPPROV-OK.TXT']);
      const text = (await readFatFile(image, 'MPPROV-OK.TXT')) ?? '';
      expect(text).toMatch(
        /^mpprov CHANGED at \d\d:\d\d \(stick MPSTICK, mpprov\.yaml, job j[\d-]+[0-9a-f]{4}\): mp1: changed, 802\.1X authorization of eth1 inet not visible through the Admin API \(check the switch port\)\. Results written and synced\.\r\n/,
      );
      expect(text).toContain(end?.id ?? 'no id');
      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      // eth1 is static with 802.1X: its authorization is not visible through the Admin API, and said so.
      expect(usbLog.trimEnd().split('\n').at(-1)).toBe(
        `RESULT: CHANGED  mp1: changed, 802.1X authorization of eth1 inet not visible through the Admin API (check the switch port)  [${end?.id}]`,
      );
      // The still-running line was overwritten in place, never left behind in the finished log.
      expect(usbLog).not.toContain('the job is still running');
      for (const secret of [sim.password, PEAP_PASSWORD]) {
        expect(text.includes(secret)).toBe(false);
        expect(usbLog.includes(secret)).toBe(false);
      }
    },
  );

  it(
    'a failed job with when_done.eject false: MPPROV-FAILED.TXT says what to do, and the stick stays mounted',
    { timeout: 60_000 },
    async () => {
      const sim = await rig.simulator({ restartMs: 300 });
      const world = await rig.makeWorld({
        agentYaml: ({ mediaRoot, stateDir }) =>
          `version: 1\nmedia_roots: [${mediaRoot}]\nstate_dir: ${stateDir}\nlog_level: debug\nwhen_done: { eject: false }\n`,
      });
      const agent = await rig.startAgent(world);
      const files = stickFiles([{ name: 'mp1', sim }]);
      const { image, stick } = await rig.insertStick(world, 'BADSTICK', {
        ...files,
        'mpprov.yaml': (files['mpprov.yaml'] as string).replace('method: static', 'method: statc'),
      });
      const [end] = await waitForJobEnds(world, 1, agent);
      expect(end?.result).toBe('FAILED');
      expect(await stick.mounted()).toBe(true);
      expect(await agent.output()).not.toContain('is released');
      await stick.unmount();
      expect(resultTxts(await rootNames(image))).toEqual(['MPPROV-FAILED.TXT']);
      const text = (await readFatFile(image, 'MPPROV-FAILED.TXT')) ?? '';
      expect(text).toContain('mpprov FAILED at ');
      expect(text).toContain('mpprov.yaml is invalid (1 error), nothing was sent to any device.');
      // The reason and the action from the failure table: the problem with its line, where to read the rest.
      expect(text).toContain(
        'What to do: mpprov.yaml is invalid: line 10: monitoring_points[0].interfaces.eth1.ipv4.method: "statc" is not one of: dhcp, static, manual. Fix mpprov.yaml (all its problems are in usb.log, each with its line) and insert the stick again.',
      );
      expect(text.includes(sim.password)).toBe(false);
    },
  );

  it(
    'a stick pulled mid-job shows BUSY and a usb.log that says the job was still running; the next insertion writes the result',
    { timeout: 90_000 },
    async () => {
      const { sim, world, agent } = await rig.startWithDevice({ restartMs: 4000 });
      const files = { ...stickFiles([{ name: 'mp1', sim }]), 'MPPROV-OK.TXT': 'from an earlier run\r\n' };
      const { image, mountPoint, fuseLog, stick } = await rig.insertStick(world, 'PULLED', files);
      await waitFor(
        async () => (await agent.output()).includes('step 3/4: restart networking'),
        20_000,
        'the restart step',
        agent.output,
      );
      // Let the writer put the restart's lines on the stick, then yank it while the device restarts.
      await waitFor(
        async () => (await agent.output()).includes('the device is not answering yet'),
        10_000,
        'the wait for the device',
        agent.output,
      );
      await new Promise((r) => setTimeout(r, 700));
      await stick.pull();

      expect(resultTxts(await rootNames(image))).toEqual(['MPPROV-BUSY.TXT']);
      expect((await readFatFile(image, 'MPPROV-BUSY.TXT')) ?? '').toMatch(
        /^mpprov is working on this stick since \d\d:\d\d; do not remove it\. \(job j[\d-]+[0-9a-f]{4}\)\r\n$/,
      );
      const midLog = (await readFatFile(image, 'usb.log')) ?? '';
      expect(midLog).toContain('step 3/4: restart networking');
      expect(midLog.trimEnd().split('\n').at(-1)).toMatch(STILL_RUNNING);
      expect(midLog).not.toContain('RESULT:');

      const [first] = await waitForJobEnds(world, 1, agent);
      expect(first?.result).toBe('CHANGED');
      expect(first?.stick_log).toBe('removed');

      // Inserted again: a new job (nothing left to do) writes what was owed, its own result, and releases the stick.
      const again = await rig.mount(image, mountPoint, { logFile: fuseLog });
      const ends = await waitForJobEnds(world, 2, agent);
      expect(ends.map((e) => e.result)).toEqual(['CHANGED', 'NO CHANGE']);
      await Promise.race([
        again.exited,
        new Promise((_, reject) => setTimeout(() => reject(new Error('the agent did not unmount the stick')), 10_000)),
      ]);
      expect(resultTxts(await rootNames(image))).toEqual(['MPPROV-NO-CHANGE.TXT']);
      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      expect(usbLog).toContain(`RESULT: CHANGED  mp1: changed and verified  [${first?.id}]`);
      expect(usbLog.trimEnd().split('\n').at(-1)).toBe(
        `RESULT: NO CHANGE  mp1: already applied, no restart  [${ends[1]?.id}]`,
      );
    },
  );
});
