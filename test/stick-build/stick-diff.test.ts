import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { fixtureCopy, fixtureSecrets } from './stick-build-rig.js';

/** `mpprov stick diff OLD NEW` between two real builds of the example fleet. */
async function build(dir: string, out: string, inventory = 'fleet.yaml'): Promise<void> {
  const result = await runCli([
    'stick',
    'build',
    join(dir, inventory),
    '--template',
    join(dir, 'template.yaml'),
    '--out',
    out,
    '--secrets-dir',
    join(dir, 'secrets'),
  ]);
  expect(result.code, result.stdout).toBe(0);
}

describe('mpprov stick diff', () => {
  it('says nothing and exits 0 for two builds of the same input', async () => {
    const { dir, out } = fixtureCopy('diff-same');
    const [a, b] = [out(), out()];
    await build(dir, a);
    await build(dir, b);
    const result = await runCli(['stick', 'diff', a, b]);
    expect(result.stdout).toBe('');
    expect(result.code).toBe(0);
  });

  it('shows changed keys per site and MP, a changed secret only as (changed), and sites added or removed', async () => {
    const { dir, out } = fixtureCopy('diff-changed');
    const before = out();
    await build(dir, before);
    writeFileSync(
      join(dir, 'fleet.yaml'),
      `version: 1
defaults:
  username: admin
  ca: certs/fleet-ca.pem
  fingerprint_sha256: "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89"
sites:
  berlin:
    vars: { dns: [10.1.0.53, 10.1.0.54], gateway: 10.1.2.1 }
    monitoring_points:
      - name: mp-berlin-01
        url: https://10.1.1.10
        eth1_address: 10.1.2.10/24
        dot1x_identity: mp-berlin-01
  rome:
    vars: { dns: [10.4.0.53] }
    monitoring_points:
      - name: mp-rome-01
        url: https://10.4.1.10
        eth1_address: 10.4.2.10/24
        dot1x_identity: mp-rome-01
`,
    );
    writeFileSync(join(dir, 'secrets/admin-berlin'), 'Berlin-New-Admin-Pw-9\n');
    writeFileSync(join(dir, 'secrets/admin-rome'), 'Rome-Admin-Pw-3\n');
    writeFileSync(join(dir, 'secrets/dot1x-mp-rome-01'), 'Rome-Dot1x-Pw-4\n');
    const after = out();
    await build(dir, after);
    const result = await runCli(['stick', 'diff', before, after]);
    expect(result.stdout.split('\n').filter((l) => l !== '')).toEqual([
      '~ berlin mp-berlin-01: interfaces.eth1.ipv4.nameservers: ["10.1.0.53"] -> ["10.1.0.53","10.1.0.54"]',
      '~ berlin: file secrets/admin-berlin: (changed)',
      '- site paris: removed',
      '+ site rome: added',
    ]);
    expect(result.code).toBe(1);
    for (const secret of [...fixtureSecrets(join(dir, 'secrets')), 'Berlin-Admin-Pw-1'])
      expect(result.stdout).not.toContain(secret);
  });

  it('exits 2 when a folder cannot be read', async () => {
    const { dir, out } = fixtureCopy('diff-error');
    const a = out();
    await build(dir, a);
    rmSync(join(dir, 'nothing'), { force: true });
    const result = await runCli(['stick', 'diff', a, join(dir, 'nothing')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('cannot be read (ENOENT)');
  });
});
