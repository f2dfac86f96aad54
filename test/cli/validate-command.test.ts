import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { repoRoot, runCli } from '../support/run-cli.js';

/** `mpprov validate` and `mpprov schema` as a user runs them: a real child process. */
describe('mpprov validate', () => {
  const profiles = readdirSync(`${repoRoot}profiles`)
    .filter((f) => f.endsWith('.yaml'))
    .sort();

  it('has one example profile per scenario', () => {
    expect(profiles).toEqual([
      'acl.yaml',
      'dhcp.yaml',
      'eap-md5.yaml',
      'eap-tls-pem.yaml',
      'eap-tls-pfx.yaml',
      'peap-mschapv2.yaml',
      'peap-tls.yaml',
      'static-dual-stack.yaml',
      'vlan-dot1x.yaml',
      'wireless-wpa2-enterprise.yaml',
      'wireless-wpa2-personal.yaml',
    ]);
  });

  for (const profile of profiles) {
    it(`accepts profiles/${profile}`, async () => {
      const result = await runCli(['validate', `profiles/${profile}`, '--json']);
      const report = JSON.parse(result.stdout) as { valid: boolean; errors: number; problems: unknown[] };
      expect(report.problems.filter((p) => (p as { severity: string }).severity === 'error')).toEqual([]);
      expect(report.valid).toBe(true);
      expect(result.code).toBe(0);
    });
  }

  it('prints every problem as FILE:LINE:COL  path  message  (hint) and exits 1', async () => {
    const result = await runCli(['validate', 'test/fixtures/config/bad/tls-with-password.yaml']);
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n')).toEqual([
      "test/fixtures/config/bad/tls-with-password.yaml:11:11  monitoring_points[0].interfaces.eth0.dot1x  EAP-TLS needs 'ca_cert'  (add ca_cert: with the CA that issued the RADIUS server certificate)",
      "test/fixtures/config/bad/tls-with-password.yaml:11:11  monitoring_points[0].interfaces.eth0.dot1x  EAP-TLS needs 'private_key'  (add private_key: (PEM, DER or PFX))",
      "test/fixtures/config/bad/tls-with-password.yaml:13:11  monitoring_points[0].interfaces.eth0.dot1x.password  'password' does not fit EAP-TLS  (remove password, or change eap)",
      'test/fixtures/config/bad/tls-with-password.yaml: INVALID (3 errors, 0 warnings)',
      '',
    ]);
    expect(result.stdout + result.stderr).not.toContain('tls-SeCrEt-8');
    expect(result.stdout + result.stderr).not.toContain('pw-SeCrEt-1');
  });

  it('finds mpprov.yaml when given the stick folder', async () => {
    const result = await runCli(['validate', 'test/fixtures/config/stick-folder']);
    expect(result.stdout).toContain('test/fixtures/config/stick-folder/mpprov.yaml: valid');
    expect(result.code).toBe(0);
  });

  it('reports a missing file as a problem with exit 1, not a stack trace', async () => {
    const result = await runCli(['validate', 'no/such/mpprov.yaml']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(
      'no/such/mpprov.yaml:1:1  (file)  the configuration file does not exist\nno/such/mpprov.yaml: INVALID (1 error, 0 warnings)\n',
    );
    expect(result.stderr).toBe('');
  });

  it('--json gives a machine-readable report', async () => {
    const result = await runCli(['validate', '--json', 'test/fixtures/config/bad/gateway-outside-subnet.yaml']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      file: 'test/fixtures/config/bad/gateway-outside-subnet.yaml',
      valid: false,
      errors: 1,
      warnings: 0,
      problems: [
        {
          severity: 'error',
          file: 'test/fixtures/config/bad/gateway-outside-subnet.yaml',
          line: 12,
          column: 20,
          path: 'monitoring_points[0].interfaces.eth0.ipv4.gateway',
          message: 'gateway 192.0.3.1 is outside the subnet of 192.0.2.10/24',
          hint: "use a gateway inside the interface's subnet, or correct the prefix length",
        },
      ],
    });
  });
});

describe('mpprov schema', () => {
  it('prints the JSON Schema that profiles/mpprov.schema.json holds (regenerate it when the format changes)', async () => {
    const result = await runCli(['schema']);
    expect(result.code).toBe(0);
    const schema = JSON.parse(result.stdout) as { properties: Record<string, unknown>; additionalProperties: boolean };
    expect(Object.keys(schema.properties)).toEqual(['version', 'monitoring_points']);
    expect(schema.additionalProperties).toBe(false);
    expect(result.stdout).toBe(readFileSync(`${repoRoot}profiles/mpprov.schema.json`, 'utf8'));
  });

  it('every profile points editors at the schema', () => {
    const profiles = readdirSync(`${repoRoot}profiles`).filter((f) => f.endsWith('.yaml'));
    expect(profiles.length).toBeGreaterThan(0);
    for (const profile of profiles) {
      expect(readFileSync(`${repoRoot}profiles/${profile}`, 'utf8')).toContain(
        '# yaml-language-server: $schema=./mpprov.schema.json',
      );
    }
  });
});
