import { execFileSync } from 'node:child_process';
import { closeSync, copyFileSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { useSimulator } from '../support/simulator-fixture.js';
import { stateDir, stickFiles } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';
import { PROFILE_ADMIN_PASSWORD, profileSticks, useSigningRig, writeStick } from './signing-rig.js';

/**
 * A signature file that is there but unusable is never "no signature": with allowed signers to
 * check against, `validate` and `apply` refuse the stick and say why, and the file is never read
 * past its limit (a 1 GiB file, a FIFO that would block, a link to somewhere else).
 */

const rig = useSigningRig();
const profileStick = profileSticks('unusable-sig');
const { sim } = useSimulator({ restartMs: 150 });

interface Case {
  name: string;
  /** Replaces the stick's good mpprov.sha256.sig (given its bytes) with the unusable one. */
  make: (sigFile: string, good: Buffer) => void;
  reason: string;
}

const CASES: readonly Case[] = [
  {
    name: '1 GiB',
    make: (file) => {
      rmSync(file);
      // Sparse: a reader that reads it whole would take a GiB of memory for it.
      const fd = openSync(file, 'w');
      closeSync(fd);
      execFileSync('truncate', ['-s', '1G', file]);
    },
    reason: 'it is 1073741824 bytes; the limit is 16 KiB',
  },
  {
    name: 'truncated',
    make: (file, good) => writeFileSync(file, good.subarray(0, Math.floor(good.length / 2))),
    reason: 'it is cut short (it does not end with -----END SSH SIGNATURE-----)',
  },
  {
    name: 'not a signature',
    make: (file) => writeFileSync(file, 'this stick is signed, trust me\n'),
    reason: 'it is not an SSH signature (it does not start with -----BEGIN SSH SIGNATURE-----)',
  },
  { name: 'empty', make: (file) => writeFileSync(file, ''), reason: 'the file is empty' },
  {
    name: 'a FIFO',
    make: (file) => {
      rmSync(file);
      execFileSync('mkfifo', [file]);
    },
    reason: 'it is a FIFO (named pipe), not a regular file',
  },
  {
    name: 'a link (to the good signature itself)',
    make: (file) => {
      const elsewhere = join(tempFolder('elsewhere'), 'mpprov.sha256.sig');
      copyFileSync(file, elsewhere);
      rmSync(file);
      symlinkSync(elsewhere, file);
    },
    reason: 'it is a link, not the file itself',
  },
];

async function sign(root: string): Promise<Buffer> {
  const signed = await runCli(['sign', root, '--key', rig.keys.team]);
  expect(signed.code, signed.stdout + signed.stderr).toBe(0);
  return readFileSync(join(root, 'mpprov.sha256.sig'));
}

describe('mpprov validate --allowed-signers with an unusable signature file', () => {
  for (const c of CASES) {
    it(`${c.name}: refused, saying why`, async () => {
      const root = profileStick();
      const sigFile = join(root, 'mpprov.sha256.sig');
      c.make(sigFile, await sign(root));
      const result = await runCli(['validate', root, '--allowed-signers', rig.allowedSigners]);
      expect(result.code, result.stdout + result.stderr).toBe(1);
      expect(result.stdout).toMatch(
        new RegExp(`^${sigFile}:1:1 .*mpprov\\.sha256\\.sig is on the stick but unusable: ${escape(c.reason)}`, 'm'),
      );
      expect(result.stdout).toContain(`${join(root, 'mpprov.yaml')}: signature refused\n`);
      expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(/: INVALID \(/);
      expect(result.stdout + result.stderr).not.toContain(PROFILE_ADMIN_PASSWORD);
    });
  }
});

describe('mpprov apply with allowed signers (signatures not required) and an unusable signature file', () => {
  for (const c of CASES) {
    it(`${c.name}: refused like a bad signature, nothing sent`, async () => {
      const root = tempFolder('stick');
      writeStick(root, stickFiles([{ name: 'mp1', sim }]));
      c.make(join(root, 'mpprov.sha256.sig'), await sign(root));
      const agent = join(tempFolder('agent'), 'agent.yaml');
      writeFileSync(agent, `version: 1\nsignatures: { required: false, allowed_signers: ${rig.allowedSigners} }\n`);
      const result = await runCli(['apply', root, '--agent-config', agent, '--state-dir', stateDir()]);
      expect(result.code, result.stdout + result.stderr).toBe(1);
      expect(result.stdout).toContain(
        `the stick's signature is refused (${join(root, 'mpprov.sha256.sig')}: mpprov.sha256.sig is on the stick but unusable: ${c.reason}); nothing was sent to any device`,
      );
      expect(sim.requests()).toEqual([]);
      expect(result.stdout + result.stderr).not.toContain(sim.password);
    });
  }
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
