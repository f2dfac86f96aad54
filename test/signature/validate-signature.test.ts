import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, runCli } from '../support/run-cli.js';
import { PROFILE_ADMIN_PASSWORD, profileSticks, useSigningRig } from './signing-rig.js';

/** `mpprov validate DIR --allowed-signers FILE` as a person runs it (the built CLI, real ssh-keygen keys). */
const ADMIN_PASSWORD = PROFILE_ADMIN_PASSWORD;

const rig = useSigningRig();
const profileStick = profileSticks('validate-sig');

async function signed(key: string): Promise<string> {
  const root = profileStick();
  const result = await runCli(['sign', root, '--key', key]);
  expect(result.code, result.stderr).toBe(0);
  return root;
}

describe('mpprov validate --allowed-signers', () => {
  it('says who signed a signed folder, in one line, and exits 0', async () => {
    const root = await signed(rig.keys.team);
    const result = await runCli(['validate', root, '--allowed-signers', rig.allowedSigners]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.filter((l) => l.includes('signed by'))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${join(root, 'mpprov.yaml')}: signed by team@example\\.com \\(ED25519 key SHA256:[^)]+\\), 6 files checked$`,
        ),
      ),
    ]);
    expect(lines.at(-1)).toMatch(/: valid \(/);
    expect(result.stdout + result.stderr).not.toContain(ADMIN_PASSWORD);
  });

  it('says an unsigned folder is not signed, without failing it', async () => {
    const root = profileStick();
    const result = await runCli(['validate', root, '--allowed-signers', rig.allowedSigners]);
    expect(result.stdout).toContain(`${join(root, 'mpprov.yaml')}: not signed\n`);
    expect(result.code, result.stdout).toBe(0);
  });

  it('refuses an altered folder with a located problem naming the file, and exits 1', async () => {
    const root = await signed(rig.keys.ops);
    copyFileSync(`${repoRoot}profiles/certs/client-ca.pem`, join(root, 'certs/radius-ca.pem'));
    const result = await runCli(['validate', root, '--allowed-signers', rig.allowedSigners]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      new RegExp(
        `^${join(root, 'mpprov.sha256')}:\\d+:\\d+ .*'certs/radius-ca\\.pem' changed after the stick was signed`,
        'm',
      ),
    );
    expect(result.stdout).toContain(`${join(root, 'mpprov.yaml')}: signature of ops@example.com refused\n`);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(/: INVALID \(/);
  });

  it('refuses a folder signed by a key that is not an allowed signer', async () => {
    const root = await signed(rig.keys.stranger);
    const result = await runCli(['validate', root, '--allowed-signers', rig.allowedSigners]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/mpprov\.sha256\.sig:1:1 .*signed by a key that is not in the allowed signers/);
    expect(result.stdout).toContain(': signature refused\n');
  });
});
