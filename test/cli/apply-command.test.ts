import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFleet, type Fleet, type SimulatorHandle } from '../../src/simulator/index.js';
import { runCli } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import {
  PROFILE_ADMIN_PASSWORD,
  PROFILE_DEVICE,
  stateDir,
  stickFromProfile,
  stickHead,
  stickWithConfig,
} from '../support/stick-workspace.js';

/** `mpprov plan` and `mpprov apply` as a provisioning script runs them: child processes, real HTTPS. */
const { start: startProfileDevice } = useSimulators(PROFILE_DEVICE);
let device: SimulatorHandle | undefined;
let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

const engineArgs = (state: string) => ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', state];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

describe('mpprov plan', () => {
  it('exits 2 with a redacted diff when something would change, 0 once applied', async () => {
    device = await startProfileDevice();
    const file = stickFromProfile('peap-mschapv2.yaml', device.url);
    const state = stateDir();
    const plan = await runCli(['plan', file, ...engineArgs(state)]);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('+ eth1 inet (create)');
    expect(plan.stdout).toContain('      wpa_password: (changed)');
    expect(plan.stdout).toContain('      wpa_phase2: "auth=MSCHAPV2"');
    expect(plan.stdout).toMatch(
      /1\. upload 1 file\(s\): ca-[0-9a-f]{12}\.pem \(wpa_ca_cert, from certs\/radius-ca\.pem\)/,
    );
    expect(plan.stdout).not.toContain('example-peap-password');
    expect(device.requests().filter((r) => r.method !== 'GET')).toEqual([]);

    expect((await runCli(['apply', file, ...engineArgs(state)])).code).toBe(0);
    const again = await runCli(['plan', file, ...engineArgs(state)]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('no change, no restart');
  });

  it('exits 1 on an invalid file and sends nothing', async () => {
    device = await startProfileDevice();
    const file = stickWithConfig(stickHead(device, '    interfaces:\n      eth1:\n        ipv4: { method: statik }\n'));
    const result = await runCli(['plan', file, ...engineArgs(stateDir())]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `${file}:9:25  monitoring_points[0].interfaces.eth1.ipv4.method  "statik" is not one of: dhcp, static, manual  (did you mean 'static'?)`,
    );
    expect(result.stdout).toContain('INVALID, nothing was sent to any device');
    expect(device.requests()).toEqual([]);
  });
});

describe('mpprov apply', () => {
  it('applies, prints RESULT, keeps secrets out of every output and state file', async () => {
    device = await startProfileDevice();
    const state = stateDir();
    const secrets = [PROFILE_ADMIN_PASSWORD, 'example-wifi-passphrase'];
    const file = stickFromProfile('wireless-wpa2-personal.yaml', device.url);
    const first = await runCli(['apply', file, ...engineArgs(state)]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('RESULT: CHANGED (branch-12-mp1 changed)');
    const second = await runCli(['apply', file, ...engineArgs(state)]);
    expect(second.stdout).toContain('RESULT: NO CHANGE (branch-12-mp1 no-change)');
    const record = join(state, 'secrets-record.json');
    expect(statSync(record).mode & 0o777).toBe(0o600);
    const everything = [
      first.stdout,
      first.stderr,
      second.stdout,
      second.stderr,
      ...filesUnder(state).map((f) => readFileSync(f, 'utf8')),
    ].join('\n');
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });

  it('exits 1 with the failure sentence when the device refuses the credentials', async () => {
    device = await startProfileDevice({ password: 'not-the-profile-password' });
    const result = await runCli(['apply', stickFromProfile('dhcp.yaml', device.url), ...engineArgs(stateDir())]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`[branch-12-mp1] FAILED: bad credentials for admin at ${device.url}`);
    expect(result.stdout).toContain('RESULT: FAILED (branch-12-mp1 failed)');
  });

  it('provisions 50 devices in parallel with --json: every line parses, every device ends correct', async () => {
    fleet = await startFleet(50, { password: PROFILE_ADMIN_PASSWORD, restartMs: 200, serviceRateLimit: false });
    const points = fleet.devices
      .map(
        (d, i) => `  - name: mp${String(i).padStart(2, '0')}
    url: ${d.url}
    password_file: secrets/admin.pw
    tls: { fingerprint_sha256: "${d.fingerprintSha256}" }
    interfaces:
      eth1:
        ipv4: { method: static, address: 198.51.100.${i + 10}/24, gateway: 198.51.100.1 }
`,
      )
      .join('');
    const file = stickWithConfig(`version: 1\nmonitoring_points:\n${points}`);
    const result = await runCli(['apply', '--json', file, ...engineArgs(stateDir())]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; outcome?: string; devices?: { outcome: string }[] });
    const final = lines.at(-1);
    expect(final?.type).toBe('result');
    expect(final?.outcome).toBe('changed');
    expect(final?.devices?.map((d) => d.outcome)).toEqual(new Array(50).fill('changed'));
    expect(lines.filter((l) => l.type === 'device-result')).toHaveLength(50);
    expect(fleet.devices).toHaveLength(50);
    fleet.devices.forEach((d, i) => {
      const eth1 = d.state().interfaces.active.find((x) => x.name === 'eth1') as {
        families: { inet: { address: string } };
      };
      expect(eth1.families.inet.address).toBe(`198.51.100.${i + 10}`);
    });
  });
});

describe('mpprov apply with a state directory it cannot write', () => {
  it('still succeeds, and warns that unchanged secrets will be sent again', async () => {
    device = await startProfileDevice();
    const result = await runCli([
      'apply',
      stickFromProfile('dhcp.yaml', device.url),
      '--agent-config',
      '/nonexistent/agent.yaml',
      '--state-dir',
      '/proc/self/mpprov-state',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('RESULT: CHANGED (branch-12-mp1 changed)');
    expect(result.stdout).toMatch(
      /WARNING: the secrets record could not be saved in the state directory \(E[A-Z]+\); unchanged secrets will be sent again next time/,
    );
  });
});
