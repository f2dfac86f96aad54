import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allFiles } from '../daemon/agent-process.js';
import { runCli } from '../support/run-cli.js';
import { profilesDir, stickFromProfile } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';
import { expectDeviceEnd, expectNoSecrets, expectSentence } from './cell-assertions.js';
import { agentYamlLines, cellSecrets, DEVICE_NAME, MATRIX_TIMEOUTS, startCellDevice } from './cell-world.js';
import { FAULTS, PROFILE_TRAITS, type Expected, type Fault, type ProfileTraits } from './matrix.js';
import { slots } from './slots.js';

/**
 * The fault matrix through `mpprov apply`: every profile in profiles/ x every fault of matrix.ts,
 * the built CLI as a child process against a simulated device (and service) over real HTTPS.
 * Each cell asserts the exit status, the RESULT line, the device's sentence (and its roll-back,
 * verified), the post-check's sentence, the device's end state through the control port, and
 * that no secret reached the output. Cells run side by side, four at a time.
 */

const cells = slots(5);

describe('the matrix covers every profile', () => {
  it('has traits for exactly the profiles in profiles/', () => {
    const profiles = readdirSync(profilesDir)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    expect(profiles.length).toBeGreaterThan(0);
    expect(PROFILE_TRAITS.map((p) => p.file)).toEqual(profiles);
  });
});

describe.concurrent('mpprov apply: every profile x every fault', () => {
  for (const profile of PROFILE_TRAITS) {
    for (const fault of FAULTS) {
      it(`${profile.file} x ${fault.id} (${fault.title})`, { timeout: 120_000 }, () =>
        cells.run(() => applyCell(profile, fault)),
      );
    }
  }
});

async function applyCell(profile: ProfileTraits, fault: Fault): Promise<void> {
  const cell = await startCellDevice(fault);
  try {
    const stick = stickFromProfile(profile.file, cell.sim.url);
    const dir = tempFolder('matrix-agent');
    const state = join(dir, 'state');
    mkdirSync(state);
    const agentYaml = join(dir, 'agent.yaml');
    writeFileSync(agentYaml, `${agentYamlLines(dir, state, cell.service).join('\n')}\n`);
    const { restartS, dot1xS } = MATRIX_TIMEOUTS;
    // The restart and 802.1X waits by flag as well (what a script passes), the request deadline from agent.yaml.
    const run = await runCli([
      'apply',
      stick,
      '--agent-config',
      agentYaml,
      '--restart-timeout',
      String(restartS),
      '--dot1x-grace',
      String(dot1xS),
    ]);
    const expected = fault.expect(profile);
    const context = `${profile.file} x ${fault.id}\n--- stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr}`;

    expect(run.code, context).toBe(expected.exit);
    expect(resultLine(run.stdout), context).toBe(
      `RESULT: ${expected.word} (${DEVICE_NAME} ${outcomeWord(expected)}${serviceNote(expected, fault)})`,
    );
    const { message, serviceNote: notConfirmed } = closingLine(run.stdout, expected.word);
    expectSentence(message, expected, context);
    if (expected.service === undefined) expect(notConfirmed, context).toBeUndefined();
    else expect(notConfirmed, context).toMatch(expected.service);
    // Announced only when a request will write something back, with how many stanzas.
    expect(
      new RegExp(
        `^\\[${DEVICE_NAME}\\] rolling back \\d+ stanza\\(s\\) to the configuration before this run$`,
        'm',
      ).test(run.stdout),
      context,
    ).toBe(expected.rolledBack);
    const unconfirmed = run.stdout
      .split('\n')
      .find((l) =>
        l.startsWith(`${DEVICE_NAME}: configured and verified, but NOT CONFIRMED by the monitoring service: `),
      );
    if (expected.service === undefined) expect(unconfirmed, context).toBeUndefined();
    else
      expect(unconfirmed?.replace(/^.*?NOT CONFIRMED by the monitoring service: /, ''), context).toMatch(
        expected.service,
      );

    await expectDeviceEnd(cell.sim, fault, profile, expected, message ?? '', context);
    const stateFiles = [...(await allFiles(state)).values()].map((b) => b.toString('utf8'));
    expectNoSecrets([run.stdout, run.stderr, ...stateFiles], cellSecrets(profile), context);
  } finally {
    await cell.close();
  }
}

function resultLine(stdout: string): string | undefined {
  return stdout.split('\n').find((line) => line.startsWith('RESULT: '));
}

const NOT_CONFIRMED = '; NOT CONFIRMED by the service: ';

/** The device's closing line, `[name] WORD: sentence[; NOT CONFIRMED by the service: sentence]`, in its two parts. */
function closingLine(stdout: string, word: string): { message?: string; serviceNote?: string } {
  const prefix = `[${DEVICE_NAME}] ${word}: `;
  const line = stdout
    .split('\n')
    .find((l) => l.startsWith(prefix))
    ?.slice(prefix.length);
  const at = line?.indexOf(NOT_CONFIRMED) ?? -1;
  if (line === undefined || at < 0) return line === undefined ? {} : { message: line };
  return { message: line.slice(0, at), serviceNote: line.slice(at + NOT_CONFIRMED.length) };
}

function outcomeWord(expected: Expected): string {
  return expected.word === 'NO CHANGE' ? 'no-change' : expected.word.toLowerCase();
}

/** With a service block the RESULT line says whether the service confirmed the device. */
function serviceNote(expected: Expected, fault: Fault): string {
  if (fault.service === undefined || expected.word === 'FAILED') return '';
  return expected.service === undefined ? ', connected' : ', NOT connected';
}
