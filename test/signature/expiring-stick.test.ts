import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStick } from '../../src/config/index.js';
import {
  POLICY_NAME,
  parseNotAfter,
  readSignatureFiles,
  referencedFiles,
  signatureVerdict,
  signStick,
} from '../../src/signature/index.js';
import { runCli } from '../support/run-cli.js';
import { PROFILE_ADMIN_PASSWORD, profileSticks, readStick, useSigningRig } from './signing-rig.js';

/** Sticks that expire (docs/stick-format.md): mpprov.policy.yaml under the signature, judged at a given moment. */
const rig = useSigningRig();
const profileStick = profileSticks('expiring');

/** A profile stick with `policy` as mpprov.policy.yaml, signed with it listed (as `mpprov sign` does). */
async function signedWithPolicy(policy: string | undefined, listPolicy = true): Promise<string> {
  const root = profileStick();
  if (policy !== undefined) writeFileSync(join(root, POLICY_NAME), policy);
  const loaded = await loadStick(join(root, 'mpprov.yaml'));
  const outcome = await signStick(root, rig.keys.team, {
    configName: 'mpprov.yaml',
    referencedPaths: referencedFiles(loaded.model),
    extraPaths: policy !== undefined && listPolicy ? [POLICY_NAME] : [],
  });
  expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
  return root;
}

async function verdictAt(root: string, now: Date, allowedSigners: string | undefined = rig.allowedSigners) {
  const files = readStick(root);
  const loaded = await loadStick(join(root, 'mpprov.yaml'));
  return signatureVerdict(
    { required: false, allowedSigners },
    {
      files: await readSignatureFiles(root),
      filesByPath: files,
      configName: 'mpprov.yaml',
      referencedPaths: referencedFiles(loaded.model),
      now,
    },
  );
}

describe('not_after', () => {
  it('reads a date as the end of that day in UTC, and an RFC 3339 time as that instant', () => {
    expect(parseNotAfter('2026-12-31')?.instant.toISOString()).toBe('2026-12-31T23:59:59.999Z');
    expect(parseNotAfter('2026-12-31T18:00:00+02:00')?.instant.toISOString()).toBe('2026-12-31T16:00:00.000Z');
    for (const bad of ['2026-02-30', '2026-13-01', '31.12.2026', '2026-12-31T25:00:00Z', 'tomorrow', ''])
      expect(parseNotAfter(bad), bad).toBeUndefined();
  });
});

describe('the signature verdict with a policy file', () => {
  it('a signed stick is good through the last day it names, and says until when', async () => {
    const root = await signedWithPolicy('not_after: 2026-12-31\n');
    const verdict = await verdictAt(root, new Date('2026-12-31T23:59:00Z'));
    expect(verdict.problems).toEqual([]);
    expect(verdict.status).toBe('signed');
    expect(verdict.notAfter).toBe('2026-12-31');
    expect(verdict.line).toMatch(/^signed by team@example\.com .*; valid until 2026-12-31 \(end of day, UTC\)$/);
  });

  it('refuses it the moment after, naming the date', async () => {
    const root = await signedWithPolicy('not_after: 2026-12-31\n');
    const verdict = await verdictAt(root, new Date('2027-01-01T00:00:00Z'));
    expect(verdict.status).toBe('refused');
    expect(verdict.problems).toEqual([
      expect.objectContaining({
        severity: 'error',
        file: POLICY_NAME,
        message:
          'the stick expired: it was signed to be used until 2026-12-31 (end of day, UTC), and it is now 2027-01-01T00:00:00.000Z',
      }),
    ]);
    expect(verdict.line).toContain('refused: the stick expired');
  });

  it('refuses a signed stick whose signed policy file was removed or altered', async () => {
    const removed = await signedWithPolicy('not_after: 2026-12-31\n');
    writeFileSync(join(removed, POLICY_NAME), 'not_after: 2099-12-31\n');
    const verdict = await verdictAt(removed, new Date('2026-06-01T00:00:00Z'));
    expect(verdict.status).toBe('refused');
    expect(verdict.problems.map((p) => p.message)).toEqual([
      "'mpprov.policy.yaml' changed after the stick was signed: its SHA-256 is not the listed one",
    ]);
  });

  it('refuses a signed stick whose signed policy file was deleted: removing it never lifts the expiry', async () => {
    const root = await signedWithPolicy('not_after: 2026-12-31\n');
    rmSync(join(root, POLICY_NAME));
    const verdict = await verdictAt(root, new Date('2027-06-01T00:00:00Z'));
    expect(verdict.status).toBe('refused');
    expect(verdict.problems.map((p) => `${p.file}: ${p.message}`)).toEqual([
      "mpprov.sha256: 'mpprov.policy.yaml' is listed but not on the stick",
    ]);
  });

  it('refuses a signed policy it cannot read, with one located problem', async () => {
    const root = await signedWithPolicy('not_after: 2026-12-31\nmax_uses: 3\n');
    const verdict = await verdictAt(root, new Date('2026-06-01T00:00:00Z'));
    expect(verdict.status).toBe('refused');
    expect(verdict.problems.map((p) => `${p.file}: ${p.message}`)).toEqual([
      `${POLICY_NAME}: the file must hold exactly one key, not_after, with a date`,
    ]);
  });

  it('refuses a signed policy written with a YAML alias, without throwing', async () => {
    const root = await signedWithPolicy('not_after: &day 2099-12-31\nagain: *day\n');
    const verdict = await verdictAt(root, new Date('2026-06-01T00:00:00Z'));
    expect(verdict.status).toBe('refused');
    expect(verdict.problems.map((p) => `${p.file}: ${p.message}`)).toEqual([
      `${POLICY_NAME}: the file must hold exactly one key, not_after, with a date`,
    ]);
  });

  it('ignores an unsigned stick policy file with a warning, and one the signature does not list', async () => {
    const unsigned = profileStick();
    writeFileSync(join(unsigned, POLICY_NAME), 'not_after: 2020-01-01\n');
    const forUnsigned = await verdictAt(unsigned, new Date('2026-06-01T00:00:00Z'));
    expect(forUnsigned.problems).toEqual([]);
    expect(forUnsigned.warnings.map((p) => `${p.severity} ${p.message}`)).toEqual([
      `warning ${POLICY_NAME} is ignored: the stick is not signed, so nobody vouches for it`,
    ]);
    const unlisted = await signedWithPolicy('not_after: 2020-01-01\n', false);
    const forUnlisted = await verdictAt(unlisted, new Date('2026-06-01T00:00:00Z'));
    expect(forUnlisted.status).toBe('signed');
    expect(forUnlisted.warnings.map((p) => p.message)).toEqual([
      `${POLICY_NAME} is ignored: ${POLICY_NAME} is not listed in the signed list, so nobody vouches for it`,
    ]);
    const unchecked = await verdictAt(unsigned, new Date('2026-06-01T00:00:00Z'), undefined);
    expect(unchecked.warnings).toHaveLength(1);
  });
});

describe('mpprov sign --valid-until and validate --allowed-signers', () => {
  it('writes the policy file, signs it, and validate says until when', async () => {
    const root = profileStick();
    const signed = await runCli(['sign', root, '--key', rig.keys.team, '--valid-until', '2099-12-31']);
    expect(signed.code, signed.stdout + signed.stderr).toBe(0);
    expect(signed.stdout).toContain(`lists mpprov.yaml, `);
    expect(signed.stdout).toMatch(/, mpprov\.policy\.yaml\n$/);
    expect(readFileSync(join(root, POLICY_NAME), 'utf8')).toBe('not_after: 2099-12-31\n');
    const validated = await runCli(['validate', root, '--allowed-signers', rig.allowedSigners]);
    expect(validated.code, validated.stdout).toBe(0);
    expect(validated.stdout).toContain('valid until 2099-12-31 (end of day, UTC)');
    expect(validated.stdout + validated.stderr).not.toContain(PROFILE_ADMIN_PASSWORD);
  });

  it('refuses a date that has passed or is no date, before writing anything', async () => {
    for (const [date, said] of [
      ['2020-01-01', '--valid-until 2020-01-01 has already passed'],
      ['31.12.2099', "--valid-until '31.12.2099' is neither a date (YYYY-MM-DD) nor an RFC 3339 time"],
    ] as const) {
      const root = profileStick();
      const result = await runCli(['sign', root, '--key', rig.keys.team, '--valid-until', date]);
      expect(result.code).toBe(64);
      expect(result.stderr).toContain(said);
      expect(existsSync(join(root, POLICY_NAME))).toBe(false);
      expect(existsSync(join(root, 'mpprov.sha256'))).toBe(false);
    }
  });

  it('signs a policy file already in the folder, and refuses one whose date has passed', async () => {
    const current = profileStick();
    writeFileSync(join(current, POLICY_NAME), 'not_after: 2099-06-30\n');
    const signed = await runCli(['sign', current, '--key', rig.keys.team]);
    expect(signed.code, signed.stdout).toBe(0);
    expect(signed.stdout).toMatch(/, mpprov\.policy\.yaml\n$/);
    const passed = profileStick();
    writeFileSync(join(passed, POLICY_NAME), 'not_after: 2020-06-30\n');
    const refused = await runCli(['sign', passed, '--key', rig.keys.team]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe(
      `${join(passed, POLICY_NAME)}: not_after 2020-06-30 has already passed (give --valid-until DATE)\n${passed}: not signed\n`,
    );
    expect(existsSync(join(passed, 'mpprov.sha256'))).toBe(false);
  });

  it('validate refuses an expired signed stick, naming the date, and exits 1', async () => {
    const root = await signedWithPolicy('not_after: 2021-03-04\n');
    const result = await runCli(['validate', root, '--allowed-signers', rig.allowedSigners]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      new RegExp(`^${join(root, POLICY_NAME)}:1:1 .*the stick expired: it was signed to be used until 2021-03-04`, 'm'),
    );
    expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(/: INVALID \(/);
  });
});
