import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useSigningRig, writeStick } from '../signature/signing-rig.js';
import { runCli } from '../support/run-cli.js';
import { useSimulator } from '../support/simulator-fixture.js';
import { stateDir, stickFiles } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * `plan` and `apply` honour agent.yaml's `signatures` as `mpprov run` does (docs/agent-config.md,
 * "The trust boundary"): with `required: true` an unsigned stick gets no request at all, whoever
 * holds the password; `--allow-unsigned` lets through only a stick that brings its own password for
 * every device, and says so loudly. Real simulator over HTTPS, real ssh-keygen keys.
 */

const keys = useSigningRig();
const { sim } = useSimulator({ restartMs: 150 });

/** agent.yaml with signatures required, optionally holding the device's password and pinning its certificate. */
function agentYaml(laptopHeld: boolean): string {
  const dir = tempFolder('agent');
  const lines = ['version: 1', `signatures: { required: true, allowed_signers: ${keys.allowedSigners} }`];
  if (laptopHeld) {
    writeFileSync(join(dir, 'admin.pw'), `${sim.password}\n`, { mode: 0o600 });
    lines.push(
      `defaults: { password_file: ${join(dir, 'admin.pw')} }`,
      `devices:\n  "${sim.url}":\n    tls: { fingerprint_sha256: "${sim.fingerprintSha256}" }`,
    );
  }
  const file = join(dir, 'agent.yaml');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** A stick naming the simulator with the laptop's password (none of its own). */
function laptopCredentialStick(): string {
  const dir = tempFolder('stick');
  writeStick(dir, {
    'mpprov.yaml': `version: 1\nmonitoring_points:\n  - name: mp1\n    url: ${sim.url}\n    interfaces:\n      eth1:\n        ipv4: { method: static, address: 192.0.2.10/24, gateway: 192.0.2.1 }\n`,
  });
  return dir;
}

/** A stick bringing its own password (secrets/mp1.pw) and pin for the simulator. */
function ownCredentialStick(): string {
  const dir = tempFolder('stick');
  writeStick(dir, stickFiles([{ name: 'mp1', sim }]));
  return dir;
}

async function sign(dir: string): Promise<void> {
  const signed = await runCli(['sign', dir, '--key', keys.keys.team]);
  expect(signed.code, signed.stdout + signed.stderr).toBe(0);
}

describe('signatures.required: true, as the agent honours it', () => {
  for (const command of ['plan', 'apply'] as const) {
    it(`${command}: an unsigned stick relying on the laptop's password is refused, nothing sent`, async () => {
      const stick = laptopCredentialStick();
      const result = await runCli([command, stick, '--agent-config', agentYaml(true), '--state-dir', stateDir()]);
      expect(result.code, result.stdout + result.stderr).toBe(1);
      expect(result.stdout).toContain(
        `${join(stick, 'mpprov.yaml')}: the stick's signature is refused (${join(stick, 'mpprov.sha256.sig')}: the stick is not signed); nothing was sent to any device`,
      );
      expect(sim.requests()).toEqual([]);
      expect(result.stdout + result.stderr).not.toContain(sim.password);
    });
  }

  it('apply: a signed stick is applied, and the signer is named', async () => {
    const stick = laptopCredentialStick();
    await sign(stick);
    const result = await runCli(['apply', stick, '--agent-config', agentYaml(true), '--state-dir', stateDir()]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /^signature: signed by team@example\.com \(ED25519 key SHA256:[^)]+\), 1 file checked$/m,
    );
    expect(result.stdout).toMatch(/^RESULT: CHANGED/m);
    expect(sim.requests().some((r) => r.method === 'POST')).toBe(true);
    expect(result.stdout + result.stderr).not.toContain(sim.password);
  });

  it('apply: an unsigned stick bringing its own password is refused without the flag', async () => {
    const result = await runCli([
      'apply',
      ownCredentialStick(),
      '--agent-config',
      agentYaml(false),
      '--state-dir',
      stateDir(),
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("the stick's signature is refused");
    expect(sim.requests()).toEqual([]);
  });

  it('apply --allow-unsigned: a stick bringing its own password is applied, with a loud warning', async () => {
    const result = await runCli([
      'apply',
      ownCredentialStick(),
      '--allow-unsigned',
      '--agent-config',
      agentYaml(false),
      '--state-dir',
      stateDir(),
    ]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stderr).toContain(
      'WARNING: UNSIGNED STICK USED: agent.yaml requires signatures, but --allow-unsigned lets this unsigned stick through because it brings its own admin password for every device it names; nobody vouches for its content',
    );
    expect(result.stdout).toMatch(/^RESULT: CHANGED/m);
    expect(sim.requests().some((r) => r.method === 'POST')).toBe(true);
    expect(result.stdout + result.stderr).not.toContain(sim.password);
  });

  it("apply --allow-unsigned: a stick relying on the laptop's password is still refused, nothing sent", async () => {
    const stick = laptopCredentialStick();
    const result = await runCli([
      'apply',
      stick,
      '--allow-unsigned',
      '--agent-config',
      agentYaml(true),
      '--state-dir',
      stateDir(),
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `${join(stick, 'mpprov.yaml')}: the stick's signature is refused (${join(stick, 'mpprov.sha256.sig')}: the stick is not signed); --allow-unsigned does not apply: it is only for a stick that brings its own admin password for every device it names, and this one relies on the laptop's; nothing was sent to any device`,
    );
    expect(result.stderr).not.toContain('UNSIGNED STICK USED');
    expect(sim.requests()).toEqual([]);
    expect(result.stdout + result.stderr).not.toContain(sim.password);
  });

  it('apply --allow-unsigned never passes an altered signed stick, even one with its own password', async () => {
    const stick = ownCredentialStick();
    await sign(stick);
    writeFileSync(join(stick, 'mpprov.yaml'), `${stickFiles([{ name: 'mp1', sim }])['mpprov.yaml']}# changed\n`);
    const result = await runCli([
      'apply',
      stick,
      '--allow-unsigned',
      '--agent-config',
      agentYaml(false),
      '--state-dir',
      stateDir(),
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("'mpprov.yaml' changed after the stick was signed");
    expect(sim.requests()).toEqual([]);
  });
});
