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

/**
 * `mpprov run` with allowed signers (signatures not required) and a signature file that is on the
 * stick but unusable: refused like a bad signature before any request, and usb.log says why. A FAT
 * stick holds no links or FIFOs; those cases are the CLI's (test/signature/unusable-signature.test.ts).
 */
const keys = useSigningRig();

async function signedFiles(sim: SimulatorHandle): Promise<Record<string, Buffer>> {
  const dir = mkdtempSync(join(tmpdir(), 'mpprov-unusable-sig-'));
  try {
    writeStick(dir, stickFiles([{ name: 'mp1', sim }]));
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    const outcome = await signStick(dir, keys.keys.team, {
      configName: 'mpprov.yaml',
      referencedPaths: referencedFiles(loaded.model),
    });
    expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
    return Object.fromEntries(readStick(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const CASES: readonly { name: string; bytes: (good: Buffer) => Buffer; reason: string }[] = [
  { name: 'empty', bytes: () => Buffer.alloc(0), reason: 'the file is empty' },
  {
    name: 'truncated',
    bytes: (good) => good.subarray(0, Math.floor(good.length / 2)),
    reason: 'it is cut short (it does not end with -----END SSH SIGNATURE-----)',
  },
  {
    name: 'not a signature',
    bytes: () => Buffer.from('signed, honestly\n'),
    reason: 'it is not an SSH signature (it does not start with -----BEGIN SSH SIGNATURE-----)',
  },
  {
    name: 'larger than the snapshot takes',
    bytes: () => Buffer.alloc(300 * 1024, 0x41),
    reason: `it is ${300 * 1024} bytes; the limit is 256 KiB`,
  },
];

describe('mpprov run with an unusable signature file', () => {
  const rig = useAgentRig();

  for (const c of CASES) {
    it(`${c.name}: refused before any request, usb.log says why`, { timeout: 60_000 }, async () => {
      const sim = await rig.simulator({ restartMs: 300 });
      const world = await rig.makeWorld({
        agentYaml: ({ mediaRoot, stateDir }) =>
          `version: 1\nmedia_roots: [${mediaRoot}]\nstate_dir: ${stateDir}\nlog_level: debug\ntimeouts: { request_s: 5, restart_s: 30 }\n` +
          `signatures: { required: false, allowed_signers: ${keys.allowedSigners} }\n`,
      });
      const agent = await rig.startAgent(world);
      const files = await signedFiles(sim);
      files['mpprov.sha256.sig'] = c.bytes(files['mpprov.sha256.sig'] as Buffer);
      const { image, stick } = await rig.insertStick(world, 'UNUSABLE', files);
      const [end] = await waitForJobEnds(world, 1, agent);
      await stick.unmount();
      expect(end?.result, await agent.output()).toBe('FAILED');
      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      expect(usbLog).toContain(`mpprov.sha256.sig is on the stick but unusable: ${c.reason}`);
      expect(usbLog).toMatch(/^RESULT: FAILED .*signature is refused/m);
      expect(sim.requests()).toEqual([]);
      expect(usbLog).not.toContain(sim.password);
    });
  }
});
