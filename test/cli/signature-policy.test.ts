import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { expectNoSecret, startService, TOKEN } from '../service/service-fixtures.js';
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

/** agent.yaml with signatures required and a service block: the laptop's token in a file, the service's CA in another. */
function agentYamlWithService(service: ServiceSimulator): string {
  const dir = tempFolder('agent');
  writeFileSync(join(dir, 'service.token'), `${TOKEN}\n`, { mode: 0o600 });
  writeFileSync(join(dir, 'service-ca.pem'), service.caPem);
  const file = join(dir, 'agent.yaml');
  writeFileSync(
    file,
    [
      'version: 1',
      `signatures: { required: true, allowed_signers: ${keys.allowedSigners} }`,
      'service:',
      `  url: ${service.url}`,
      `  token_file: ${join(dir, 'service.token')}`,
      `  tls: { ca: ${join(dir, 'service-ca.pem')} }`,
      '  wait_connected_s: 5',
      '',
    ].join('\n'),
  );
  return file;
}

/** A stick bringing its own password and pin, with one key the schema does not know. */
function invalidOwnCredentialStick(): string {
  const dir = tempFolder('stick');
  const files = stickFiles([{ name: 'mp1', sim }]);
  writeStick(dir, { ...files, 'mpprov.yaml': `${files['mpprov.yaml']}bogus_key: 1\n` });
  return dir;
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

  for (const command of ['plan', 'apply'] as const)
    it(`${command} --allow-unsigned: an invalid stick shows its located problems, as validate does, and the true reason`, async () => {
      const stick = invalidOwnCredentialStick();
      const args = [command, stick, '--agent-config', agentYaml(false), '--state-dir', stateDir()];
      const validated = await runCli(['validate', stick]);
      const schemaLine = validated.stdout.split('\n').find((l) => l.includes('bogus_key'));
      expect(schemaLine, validated.stdout + validated.stderr).toBeDefined();
      const text = await runCli([...args, '--allow-unsigned']);
      expect(text.code, text.stdout + text.stderr).toBe(1);
      expect(text.stdout).toContain(schemaLine);
      expect(text.stdout).toContain(
        `${join(stick, 'mpprov.yaml')}: the stick's signature is refused (${join(stick, 'mpprov.sha256.sig')}: the stick is not signed); --allow-unsigned does not apply: the stick is invalid, so it cannot be judged as bringing its own admin password for every device it names; nothing was sent to any device`,
      );
      expect(text.stdout + text.stderr).not.toContain("relies on the laptop's");
      expect(text.stderr).not.toContain('UNSIGNED STICK USED');

      const json = await runCli([...args, '--allow-unsigned', '--json']);
      expect(json.code, json.stdout + json.stderr).toBe(1);
      const lines = json.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => JSON.parse(l) as { type: string; path?: string; message?: string; sentence?: string });
      expect(lines.some((l) => l.type === 'problem' && l.message?.includes('bogus_key') === true)).toBe(true);
      const result = lines.find((l) => l.type === 'result');
      expect(result?.sentence).toContain('the stick is invalid, so it cannot be judged');

      // Without the flag the sentence is the plain refusal, and the problems are there too.
      const plain = await runCli(args);
      expect(plain.code).toBe(1);
      expect(plain.stdout).toContain(schemaLine);
      expect(plain.stdout).toContain(
        `${join(stick, 'mpprov.yaml')}: the stick's signature is refused (${join(stick, 'mpprov.sha256.sig')}: the stick is not signed); nothing was sent to any device`,
      );
      expect(sim.requests()).toEqual([]);
      expect(text.stdout + text.stderr + json.stdout + json.stderr).not.toContain(sim.password);
    });
});

describe('--allow-unsigned lends no laptop-held credential: not the service token either', () => {
  let service: ServiceSimulator;
  beforeAll(async () => {
    service = await startService({ reconnectMs: 300 });
    service.registerAppliance({ hostname: 'mp1', orgId: 12, macAddress: '00:1b:21:3a:4f:10' });
  });
  afterAll(async () => service?.close());

  const SKIPPED = "not checked: the stick is unsigned and the service token is the laptop's";

  it('apply --allow-unsigned: the device is configured, the service is never asked, and the output says why', async () => {
    service.clearRequests();
    const text = await runCli([
      'apply',
      ownCredentialStick(),
      '--allow-unsigned',
      '--agent-config',
      agentYamlWithService(service),
      '--state-dir',
      stateDir(),
    ]);
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^RESULT: CHANGED/m);
    expect(text.stdout).toContain(`mp1: service ${SKIPPED}`);
    expect(text.stdout).not.toContain('NOT CONFIRMED');

    const json = await runCli([
      'apply',
      ownCredentialStick(),
      '--allow-unsigned',
      '--json',
      '--agent-config',
      agentYamlWithService(service),
      '--state-dir',
      stateDir(),
    ]);
    expect(json.code, json.stdout + json.stderr).toBe(0);
    const lines = json.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l) as { type: string; devices?: { device: string; service?: { sentence: string } }[] });
    expect(lines.map((l) => l.type)).not.toContain('service-check-start');
    const result = lines.find((l) => l.type === 'result');
    expect(result?.devices).toHaveLength(1);
    expect(result?.devices?.[0]).toMatchObject({ device: 'mp1', service: { sentence: SKIPPED } });

    expect(sim.requests().some((r) => r.method === 'POST')).toBe(true);
    expect(service.requests()).toHaveLength(0);
    expect(service.handshakes()).toEqual({ completed: 0, failed: 0 });
    expectNoSecret([text.stdout, text.stderr, json.stdout, json.stderr], [TOKEN, sim.password]);
  });

  it('apply --allow-unsigned with paths: each said not checked for that reason, and no word of a missing service block', async () => {
    service.clearRequests();
    const dir = tempFolder('stick');
    writeStick(
      dir,
      stickFiles([{ name: 'mp1', sim, paths: [{ target: '192.0.2.80' }, { target: 'app.example.com' }] }]),
    );
    const run = await runCli([
      'apply',
      dir,
      '--allow-unsigned',
      '--json',
      '--agent-config',
      agentYamlWithService(service),
      '--state-dir',
      stateDir(),
    ]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    // agent.yaml has a service block: the one reason is the signature gate's.
    expect(run.stdout + run.stderr).not.toContain('no service block');
    const result = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; devices?: Record<string, unknown>[] })
      .find((l) => l.type === 'result');
    expect(result?.devices?.[0]).toMatchObject({
      device: 'mp1',
      service: {
        sentence: SKIPPED,
        paths: [
          { target: '192.0.2.80', sentence: `path to 192.0.2.80: ${SKIPPED}` },
          { target: 'app.example.com', sentence: `path to app.example.com: ${SKIPPED}` },
        ],
      },
    });
    expect(result?.devices?.[0]).not.toHaveProperty('pathsNotChecked');
    expect(service.requests()).toHaveLength(0);
  });

  it('apply: a signed stick relying on the laptop is post-checked with the token as before', async () => {
    service.clearRequests();
    const stick = laptopCredentialStick();
    await sign(stick);
    const dir = tempFolder('agent');
    writeFileSync(join(dir, 'admin.pw'), `${sim.password}\n`, { mode: 0o600 });
    const agent = agentYamlWithService(service);
    writeFileSync(
      agent,
      `${readFileSync(agent, 'utf8')}defaults: { password_file: ${join(dir, 'admin.pw')} }\ndevices:\n  "${sim.url}":\n    tls: { fingerprint_sha256: "${sim.fingerprintSha256}" }\n`,
    );
    const result = await runCli(['apply', stick, '--agent-config', agent, '--state-dir', stateDir()]);
    expect(result.stdout + result.stderr).not.toContain(SKIPPED);
    expect(service.requests().length).toBeGreaterThan(0);
  });
});
