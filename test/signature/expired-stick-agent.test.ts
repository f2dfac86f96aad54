import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStick } from '../../src/config/index.js';
import { POLICY_NAME, referencedFiles, signStick } from '../../src/signature/index.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { waitForJobEnds } from '../daemon/agent-process.js';
import { useAgentRig } from '../daemon/agent-rig.js';
import { readFatFile, rootNames } from '../daemon/fat-stick.js';
import { stickFiles } from '../support/stick-workspace.js';
import { readStick, useSigningRig, writeStick } from './signing-rig.js';

/** The agent with allowed signers (required or not) and a real FAT stick whose signed policy has passed. */
const keys = useSigningRig();

async function signedFiles(sim: SimulatorHandle, policy: string | undefined): Promise<Record<string, Buffer>> {
  const dir = mkdtempSync(join(tmpdir(), 'mpprov-expiring-stick-'));
  try {
    writeStick(dir, stickFiles([{ name: 'mp1', sim }]));
    if (policy !== undefined) writeFileSync(join(dir, POLICY_NAME), policy);
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    const outcome = await signStick(dir, keys.keys.team, {
      configName: 'mpprov.yaml',
      referencedPaths: referencedFiles(loaded.model),
      extraPaths: policy === undefined ? [] : [POLICY_NAME],
    });
    expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
    return Object.fromEntries(readStick(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('mpprov run with an expiring stick', () => {
  const rig = useAgentRig();

  async function start(required: boolean) {
    const sim = await rig.simulator({ restartMs: 300 });
    const world = await rig.makeWorld({
      agentYaml: ({ mediaRoot, stateDir }) =>
        `version: 1\nmedia_roots: [${mediaRoot}]\nstate_dir: ${stateDir}\nlog_level: debug\ntimeouts: { request_s: 5, restart_s: 30 }\n` +
        `signatures: { required: ${required}, allowed_signers: ${keys.allowedSigners} }\n`,
    });
    return { sim, world, agent: await rig.startAgent(world) };
  }

  for (const required of [true, false]) {
    it(
      `required: ${required}: refuses a stick past its not_after before any request, naming the date`,
      { timeout: 60_000 },
      async () => {
        const { sim, world, agent } = await start(required);
        const files = await signedFiles(sim, 'not_after: 2024-02-29\n');
        const { image, stick } = await rig.insertStick(world, 'EXPIRED', files);
        const [end] = await waitForJobEnds(world, 1, agent);
        await stick.unmount();
        expect(end?.result, await agent.output()).toBe('FAILED');
        const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
        expect(usbLog).toMatch(/signature: signature of team@example\.com refused: the stick expired/);
        expect(usbLog).toMatch(
          /^RESULT: FAILED .*signature is refused \(mpprov\.policy\.yaml: the stick expired: it was signed to be used until 2024-02-29 \(end of day, UTC\)/m,
        );
        expect(await rootNames(image)).toContain('MPPROV-FAILED.TXT');
        const failed = (await readFatFile(image, 'mpprov-failed.txt')) ?? '';
        expect(failed).toContain('2024-02-29');
        expect(sim.requests()).toEqual([]);
        expect(usbLog).not.toContain(sim.password);
      },
    );
  }

  it('runs a stick before its not_after and says until when', { timeout: 60_000 }, async () => {
    const { sim, world, agent } = await start(true);
    const { image, stick } = await rig.insertStick(world, 'CURRENT', await signedFiles(sim, 'not_after: 2099-12-31\n'));
    const [end] = await waitForJobEnds(world, 1, agent);
    await stick.unmount();
    expect(end?.result, await agent.output()).toBe('CHANGED');
    const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
    expect(usbLog).toMatch(/signature: signed by team@example\.com .*; valid until 2099-12-31 \(end of day, UTC\)/);
  });

  it('ignores an unsigned stick policy file with a warning in usb.log', { timeout: 60_000 }, async () => {
    const { sim, world, agent } = await start(false);
    const files: Record<string, string> = {
      ...stickFiles([{ name: 'mp1', sim }]),
      [POLICY_NAME]: 'not_after: 2020-01-01\n',
    };
    const { image, stick } = await rig.insertStick(world, 'UNSIGNED', files);
    const [end] = await waitForJobEnds(world, 1, agent);
    await stick.unmount();
    expect(end?.result, await agent.output()).toBe('CHANGED');
    const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
    expect(usbLog).toContain('mpprov.policy.yaml is ignored: the stick is not signed, so nobody vouches for it');
  });
});
