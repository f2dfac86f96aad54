import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  allFiles,
  makeWorld,
  readJobs,
  startAgent,
  waitForJobEnds,
  type AgentProcess,
  type AgentWorld,
} from '../daemon/agent-process.js';
import {
  makeFatImage,
  mountFat,
  readFatFile,
  requireFatTools,
  rootNames,
  type MountedStick,
} from '../daemon/fat-stick.js';
import { profilesDir } from '../support/stick-workspace.js';
import { expectDeviceEnd, expectNoSecrets, expectSentence } from './cell-assertions.js';
import { agentYamlLines, cellSecrets, DEVICE_NAME, startCellDevice } from './cell-world.js';
import { FAULTS, PROFILE_TRAITS, type Expected, type Fault, type ProfileTraits } from './matrix.js';
import { slots } from './slots.js';

/**
 * The fault matrix through the daemon: one representative profile (PEAP with a password file and
 * a CA to upload, on DHCP) x every fault of matrix.ts, as a technician meets it: `mpprov run` as a
 * child process, the profile on a real FAT stick (fusefat) it finds under its media root. Each
 * cell asserts the job's end in the state folder's history, the stick's MPPROV-*.TXT,
 * mpprov-result.json and usb.log (read back from the image after the agent released it), the
 * device's end state, and no secret anywhere. Cells run three at a time, each in a world of its
 * own (agent, state folder, media root), so one cell's cleanup never touches another's.
 */

const PROFILE = 'peap-mschapv2.yaml';
const cells = slots(3);
const RESULT_FILE: Record<Expected['word'], string> = {
  CHANGED: 'MPPROV-OK.TXT',
  'NO CHANGE': 'MPPROV-NO-CHANGE.TXT',
  FAILED: 'MPPROV-FAILED.TXT',
};

describe.concurrent(`mpprov run: ${PROFILE} on a FAT stick x every fault`, () => {
  const profile = PROFILE_TRAITS.find((p) => p.file === PROFILE);
  it('the representative profile is in the matrix', () => {
    requireFatTools();
    expect(profile?.file).toBe(PROFILE);
  });
  for (const fault of FAULTS) {
    it(`${fault.id} (${fault.title})`, { timeout: 120_000 }, () => cells.run(() => daemonCell(profile!, fault)));
  }
});

async function daemonCell(profile: ProfileTraits, fault: Fault): Promise<void> {
  const cell = await startCellDevice(fault);
  let world: AgentWorld | undefined;
  let agent: AgentProcess | undefined;
  let stick: MountedStick | undefined;
  try {
    world = await makeWorld({
      agentYaml: ({ mediaRoot, stateDir }) =>
        `${[...agentYamlLines(dirname(mediaRoot), stateDir, cell.service), `media_roots: [${mediaRoot}]`, 'log_level: debug'].join('\n')}\n`,
    });
    agent = await startAgent(world);
    const image = join(world.dir, 'mpstick.img');
    await makeFatImage(image, 'MPSTICK', stickFiles(profile.file, cell.sim.url));
    stick = await mountFat(image, join(world.mediaRoot, 'MPSTICK'), { logFile: join(world.dir, 'fusefat.log') });

    const [end] = await waitForJobEnds(world, 1, agent, 60_000);
    // The agent releases the stick once its result is written and synced (when_done.eject).
    const released = stick.exited;
    await Promise.race([
      released,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('the agent did not release the stick within 20 s')), 20_000),
      ),
    ]);
    const expected = fault.expect(profile);
    const output = await agent.output();
    const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
    const context = `${profile.file} x ${fault.id} through the daemon\n--- usb.log ---\n${usbLog}\n--- agent ---\n${output.split('\n').slice(-40).join('\n')}`;

    // The state folder's history: one job, its result word.
    expect(end?.result, context).toBe(expected.word);
    expect(
      end?.devices?.map((d) => d.outcome),
      context,
    ).toEqual([expected.word === 'NO CHANGE' ? 'no-change' : expected.word.toLowerCase()]);
    expect(
      (await readJobs(world.stateDir)).filter((j) => j.event === 'end'),
      context,
    ).toHaveLength(1);

    // The stick: exactly one result file, for this result.
    const names = (await rootNames(image)).filter((name) => /^MPPROV-.*\.TXT$/i.test(name));
    expect(names, context).toEqual([RESULT_FILE[expected.word]]);
    const resultText = (await readFatFile(image, RESULT_FILE[expected.word])) ?? '';
    expect(resultText, context).toContain(`mpprov ${expected.word} at `);

    // mpprov-result.json: the device's sentence and its roll-back, as data.
    const resultJson = JSON.parse((await readFatFile(image, 'mpprov-result.json')) ?? '{}') as {
      result?: string;
      devices?: {
        message: string;
        rollback?: { outcome: string };
        service?: { connected: boolean; sentence: string };
      }[];
    };
    expect(resultJson.result, context).toBe(expected.word);
    const device = resultJson.devices?.[0];
    expect(device?.rollback?.outcome, context).toBe(expected.rolledBack ? 'restored' : undefined);
    if (expected.service !== undefined) {
      expect(device?.service?.connected, context).toBe(false);
      expect(device?.service?.sentence, context).toMatch(expected.service);
    } else if (fault.service !== undefined && expected.word !== 'FAILED') {
      expect(device?.service?.connected, context).toBe(true);
    }
    expectSentence(device?.message, expected, context);

    // usb.log: the device's closing line carries the same sentence, and RESULT is the last line.
    const lines = usbLog.trimEnd().split(/\r?\n/);
    expect(lines.at(-1), context).toMatch(
      new RegExp(`^RESULT: ${expected.word}  ${DEVICE_NAME}: .+  \\[${end?.id}\\]$`),
    );
    // With a service block the RESULT line gives the post-check's outcome in a few words.
    expect(lines.at(-1)?.includes(', service: '), context).toBe(
      fault.service !== undefined && expected.word !== 'FAILED',
    );
    const closing = lines
      .map((l) =>
        /^\S+ \[j[\w-]+\] \[branch-12-mp1\] (CHANGED|FAILED|NO CHANGE)(?: \(MPPROV_[A-Z_]+\))?: (.*?)(?: \(\d+\.\d s\))?$/.exec(
          l,
        ),
      )
      .find((m) => m !== null);
    expect(closing?.[1], context).toBe(expected.word);
    expectSentence(closing?.[2], expected, `${context}\nthe closing line of usb.log`);

    await expectDeviceEnd(cell.sim, fault, profile, expected, device?.message ?? '', context);
    const stateFiles = [...(await allFiles(world.stateDir)).values()].map((b) => b.toString('utf8'));
    expectNoSecrets(
      [usbLog, resultText, JSON.stringify(resultJson), output, ...stateFiles],
      cellSecrets(profile),
      context,
    );
  } finally {
    await stick?.unmount().catch(() => undefined);
    await agent?.stop('SIGKILL');
    await cell.close();
    await world?.cleanup();
  }
}

/** The profile's file pointed at `url`, and every certificate and secret file it names, as the files of a stick. */
function stickFiles(profile: string, url: string): Record<string, string | Buffer> {
  const text = readFileSync(join(profilesDir, profile), 'utf8').replace('https://192.0.2.10', url);
  const files: Record<string, string | Buffer> = { 'mpprov.yaml': text };
  for (const [named] of text.matchAll(/(certs|secrets)\/[\w.-]+/g))
    files[named] = readFileSync(join(profilesDir, named));
  return files;
}
