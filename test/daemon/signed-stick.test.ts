import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStick } from '../../src/config/index.js';
import { referencedFiles, signStick } from '../../src/signature/index.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { stickFiles } from '../support/stick-workspace.js';
import { readStick, useSigningRig, writeStick } from '../signature/signing-rig.js';
import { waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { readFatFile } from './fat-stick.js';

/** The daemon with `signatures.required: true`, real ssh-keygen keys and real FAT sticks. */
const keys = useSigningRig();

/** stickFiles for `sim`, signed with `key` as `mpprov sign` does: the files of a FAT stick. */
async function signedFiles(sim: SimulatorHandle, key: string): Promise<Record<string, Buffer>> {
  const dir = mkdtempSync(join(tmpdir(), 'mpprov-signed-stick-'));
  try {
    writeStick(dir, stickFiles([{ name: 'mp1', sim }]));
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    const outcome = await signStick(dir, key, {
      configName: 'mpprov.yaml',
      referencedPaths: referencedFiles(loaded.model),
    });
    expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
    return Object.fromEntries(readStick(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('mpprov run with signatures.required', () => {
  const rig = useAgentRig();

  async function start(required = true) {
    const sim = await rig.simulator({ restartMs: 300 });
    const world = await rig.makeWorld({
      agentYaml: ({ mediaRoot, stateDir }) =>
        `version: 1\nmedia_roots: [${mediaRoot}]\nstate_dir: ${stateDir}\nlog_level: debug\ntimeouts: { request_s: 5, restart_s: 30 }\n` +
        `signatures: { required: ${required}, allowed_signers: ${keys.allowedSigners} }\n`,
    });
    return { sim, world, agent: await rig.startAgent(world) };
  }

  it('runs a stick signed by an allowed signer and names the signer in usb.log', { timeout: 60_000 }, async () => {
    const { sim, world, agent } = await start();
    const { image, stick } = await rig.insertStick(world, 'SIGNED', await signedFiles(sim, keys.keys.team));
    const [end] = await waitForJobEnds(world, 1, agent);
    await stick.unmount();
    expect(end?.result, await agent.output()).toBe('CHANGED');
    const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
    expect(usbLog).toMatch(/signature: signed by team@example\.com \(ED25519 key SHA256:[^)]+\), 2 files checked/);
    // The password file is a secret `_file`: checked from the job's snapshot, never shown.
    expect(usbLog).not.toContain(sim.password);
    expect(sim.requests().length).toBeGreaterThan(0);
  });

  it('refuses an unsigned stick before any request', { timeout: 60_000 }, async () => {
    const { sim, world, agent } = await start();
    const { image, stick } = await rig.insertStick(world, 'UNSIGNED', stickFiles([{ name: 'mp1', sim }]));
    const [end] = await waitForJobEnds(world, 1, agent);
    await stick.unmount();
    expect(end?.result, await agent.output()).toBe('FAILED');
    const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
    expect(usbLog).toContain('signature: not signed');
    expect(usbLog).toContain('mpprov.sha256.sig');
    expect(usbLog).toMatch(
      /^RESULT: FAILED .*signature is refused \(mpprov\.sha256\.sig: the stick is not signed\); nothing was sent to any device/m,
    );
    expect(sim.requests()).toEqual([]);
  });

  it(
    'refuses a signed stick whose mpprov.yaml was changed afterwards, naming the file',
    { timeout: 60_000 },
    async () => {
      const { sim, world, agent } = await start();
      const files = await signedFiles(sim, keys.keys.team);
      files['mpprov.yaml'] = Buffer.concat([files['mpprov.yaml'] as Buffer, Buffer.from('# changed after signing\n')]);
      const { image, stick } = await rig.insertStick(world, 'ALTERED', files);
      const [end] = await waitForJobEnds(world, 1, agent);
      await stick.unmount();
      expect(end?.result, await agent.output()).toBe('FAILED');
      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      expect(usbLog).toContain('signature: signature of team@example.com refused');
      expect(usbLog).toMatch(/problem: mpprov\.sha256:\d+:\d+ .*'mpprov\.yaml' changed after the stick was signed/);
      expect(usbLog).toMatch(/^RESULT: FAILED .*signature is refused/m);
      expect(sim.requests()).toEqual([]);
    },
  );

  it(
    'with required: false, an unsigned stick runs as before and usb.log says nothing of signatures',
    { timeout: 60_000 },
    async () => {
      const { sim, world, agent } = await start(false);
      const { image, stick } = await rig.insertStick(world, 'PLAIN', stickFiles([{ name: 'mp1', sim }]));
      const [end] = await waitForJobEnds(world, 1, agent);
      await stick.unmount();
      expect(end?.result, await agent.output()).toBe('CHANGED');
      expect((await readFatFile(image, 'usb.log')) ?? '').not.toContain('signature');
    },
  );
});
