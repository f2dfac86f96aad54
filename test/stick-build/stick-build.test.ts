import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { useSigningRig } from '../signature/signing-rig.js';
import { filesUnder, fixtureCopy, fixtureSecrets, modeOf } from './stick-build-rig.js';

/** `mpprov stick build` as a network team runs it: the built CLI, real files, real ssh-keygen and mtools. */
const rig = useSigningRig();

function build(dir: string, out: string, extra: string[] = [], inventory = 'fleet.yaml', env?: NodeJS.ProcessEnv) {
  return runCli(
    [
      'stick',
      'build',
      join(dir, inventory),
      '--template',
      join(dir, 'template.yaml'),
      '--out',
      out,
      '--secrets-dir',
      join(dir, 'secrets'),
      ...extra,
    ],
    env === undefined ? {} : { env },
  );
}

describe('mpprov stick build', () => {
  it('builds one signed, expiring stick per site with its image and sticks.json, the same bytes twice', async () => {
    const { dir, out } = fixtureCopy('build-ok');
    const [first, second] = [out(), out()];
    const flags = ['--sign', rig.keys.team, '--valid-until', '2099-12-31', '--image'];
    const result = await build(dir, first, flags);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    for (const secret of fixtureSecrets()) expect(result.stdout + result.stderr).not.toContain(secret);
    const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', rig.keys.team]).toString().split(' ')[1];
    const sticks = JSON.parse(readFileSync(join(first, 'sticks.json'), 'utf8')) as unknown[];
    expect(sticks).toEqual([
      {
        site: 'berlin',
        stick: 'berlin',
        image: 'berlin.img',
        monitoring_points: ['mp-berlin-01'],
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as string,
        signer: `${fingerprint} team`,
        not_after: '2099-12-31',
      },
      expect.objectContaining({ site: 'paris', monitoring_points: ['mp-paris-01', 'mp-paris-02'] }),
    ]);
    expect(result.stdout).toMatch(
      /^berlin\/ \+ berlin\.img: mp-berlin-01; mpprov\.yaml sha256 [0-9a-f]{64}; signed by SHA256:\S+ team, valid until 2099-12-31$/m,
    );
    const paris = filesUnder(join(first, 'paris'));
    expect([...paris.keys()].sort()).toEqual([
      'certs/fleet-ca.pem',
      'mpprov.policy.yaml',
      'mpprov.sha256',
      'mpprov.sha256.sig',
      'mpprov.yaml',
      'secrets/admin-paris',
      'secrets/dot1x-mp-paris-01',
      'secrets/dot1x-mp-paris-02',
    ]);
    expect(paris.get('secrets/admin-paris')?.toString()).toBe('Paris-Admin-Pw-2');
    expect(modeOf(join(first, 'paris/secrets/admin-paris'))).toBe(0o600);
    expect(paris.get('certs/fleet-ca.pem')).toEqual(readFileSync(join(dir, 'certs/fleet-ca.pem')));
    const yaml = paris.get('mpprov.yaml')?.toString() ?? '';
    expect(yaml).toContain('nameservers:\n            - 10.2.0.53\n            - 10.2.0.54\n');
    // A ${gateway:-~} with no gateway leaves the key out; berlin's site vars set it.
    expect(yaml).not.toContain('gateway');
    expect(filesUnder(join(first, 'berlin')).get('mpprov.yaml')?.toString()).toContain('gateway: 10.1.2.1\n');
    expect(execFileSync('mlabel', ['-s', '-i', join(first, 'berlin.img'), '::']).toString()).toContain('BERLIN');
    const inImage = execFileSync('mtype', ['-i', join(first, 'paris.img'), '::/mpprov.yaml'], {
      env: { ...process.env, MTOOLS_SKIP_CHECK: '1' },
    });
    expect(inImage.toString()).toBe(yaml);

    const again = await build(dir, second, flags);
    expect(again.code).toBe(0);
    for (const site of ['berlin', 'paris']) {
      const [a, b] = [filesUnder(join(first, site)), filesUnder(join(second, site))];
      expect([...b.keys()]).toEqual([...a.keys()]);
      for (const [path, bytes] of a) if (!path.endsWith('.sig')) expect(b.get(path), `${site}/${path}`).toEqual(bytes);
    }
    expect(readFileSync(join(second, 'sticks.json'))).toEqual(readFileSync(join(first, 'sticks.json')));
    // Compared as a hash: a deep comparison of two 8 MiB buffers takes minutes.
    const imageHash = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
    expect(imageHash(join(second, 'paris.img'))).toBe(imageHash(join(first, 'paris.img')));

    const validated = await runCli(['validate', join(first, 'paris'), '--allowed-signers', rig.allowedSigners]);
    expect(validated.stdout).toContain('signed by team@example.com');
    expect(validated.stdout).toContain('valid until 2099-12-31 (end of day, UTC)');
  });

  it('gives a site with a mistake no stick, each problem at the inventory cell with the template line and key path', async () => {
    const { dir, out } = fixtureCopy('build-bad');
    const inventory = readFileSync(join(dir, 'fleet.yaml'), 'utf8')
      .replace('eth1_address: 10.1.2.10/24', 'eth1_address: 10.1.2.300/24')
      .replace('        dot1x_identity: mp-paris-02\n', '');
    writeFileSync(join(dir, 'fleet.yaml'), inventory);
    writeFileSync(join(dir, 'secrets/admin-rome'), 'Rome-Admin-Pw-3\n');
    const target = out();
    const result = await build(dir, target, ['--json']);
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as { sticks: { site: string }[]; problems: Record<string, unknown>[] };
    expect(report.sticks).toEqual([]);
    expect(report.problems).toEqual([
      expect.objectContaining({
        file: join(dir, 'fleet.yaml'),
        line: 12,
        column: 23,
        path: 'monitoring_points[0].interfaces.eth1.ipv4.address',
        message: expect.stringMatching(
          new RegExp(`^mp-berlin-01: .*\\(template ${join(dir, 'template.yaml')}:13:16; mpprov\\.yaml:\\d+:\\d+\\)$`),
        ) as string,
      }),
      expect.objectContaining({
        file: join(dir, 'fleet.yaml'),
        line: 21,
        column: 9,
        path: 'monitoring_points[1].interfaces.eth1.dot1x.identity',
        message: `mp-paris-02: \${dot1x_identity} is not set for this monitoring point (template ${join(dir, 'template.yaml')}:19:17)`,
      }),
    ]);
    expect(existsSync(join(target, 'berlin'))).toBe(false);
    expect(existsSync(join(target, 'paris'))).toBe(false);
    expect(JSON.parse(readFileSync(join(target, 'sticks.json'), 'utf8'))).toEqual([]);
    for (const secret of fixtureSecrets(join(dir, 'secrets')))
      expect(result.stdout + result.stderr).not.toContain(secret);
  });

  it('names a missing secret by its name only, and builds the other sites', async () => {
    const { dir, out } = fixtureCopy('build-secret');
    execFileSync('rm', [join(dir, 'secrets/dot1x-mp-paris-02')]);
    const target = out();
    const result = await build(dir, target);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /fleet\.yaml:\d+:\d+ +monitoring_points\[1\]\.interfaces\.eth1\.dot1x\.password_file +mp-paris-02: the secret 'dot1x-mp-paris-02' is missing: there is no \S+secrets\/dot1x-mp-paris-02 \(template \S+template\.yaml:20:22\)/,
    );
    expect(existsSync(join(target, 'berlin/mpprov.yaml'))).toBe(true);
    expect(existsSync(join(target, 'paris'))).toBe(false);
    expect(result.stdout).toMatch(/1 stick\(s\) built \(listed in sticks\.json\), 1 site\(s\) got no stick/);
    for (const secret of fixtureSecrets(join(dir, 'secrets'))) expect(result.stdout).not.toContain(secret);
  });

  it('refuses an --out folder that is not empty, a --limit site it does not know, and --valid-until without --sign', async () => {
    const { dir, out } = fixtureCopy('build-usage');
    const used = out();
    expect((await build(dir, used, ['--limit', 'paris'])).code).toBe(0);
    expect(JSON.parse(readFileSync(join(used, 'sticks.json'), 'utf8'))).toEqual([
      expect.objectContaining({ site: 'paris' }),
    ]);
    const again = await build(dir, used);
    expect(again.code).toBe(64);
    expect(again.stdout).toContain('the --out folder is not empty');
    const unknown = await build(dir, out(), ['--limit', 'madrid']);
    expect(unknown.code).toBe(64);
    expect(unknown.stdout).toContain('--limit names sites the inventory does not have: madrid');
    const unsigned = await build(dir, out(), ['--valid-until', '2099-01-01']);
    expect(unsigned.code).toBe(64);
    expect(unsigned.stderr).toContain('--valid-until needs --sign');
  });

  it('refuses an empty --limit name (an empty variable selects nothing), and takes --limit repeated', async () => {
    const { dir, out } = fixtureCopy('build-limit');
    for (const limit of ['', 'berlin,']) {
      const target = out();
      const refused = await build(dir, target, ['--limit', limit]);
      expect(refused.code).toBe(64);
      expect(refused.stderr).toContain(`'${limit}' has an empty name: give site names separated by commas`);
      expect(existsSync(target)).toBe(false);
    }
    const both = out();
    expect((await build(dir, both, ['--limit', 'paris', '--limit', 'berlin'])).code).toBe(0);
    const built = JSON.parse(readFileSync(join(both, 'sticks.json'), 'utf8')) as { site: string }[];
    expect(built.map((s) => s.site)).toEqual(['berlin', 'paris']);
  });

  it('refuses two sites whose image labels would be the same, naming both', async () => {
    const { dir, out } = fixtureCopy('build-label');
    writeFileSync(
      join(dir, 'labels.csv'),
      'site,name,url,eth1_address,dot1x_identity,dns\n' +
        'warehouse-north1,mp-n,https://10.3.1.10,10.3.2.10/24,mp-n,10.3.0.53\n' +
        'warehouse-north2,mp-s,https://10.3.1.11,10.3.2.11/24,mp-s,10.3.0.53\n',
    );
    const result = await build(dir, out(), ['--image'], 'labels.csv');
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'labels.csv:3:1  (file)  sites warehouse-north1 and warehouse-north2 would both get the image label WAREHOUSE-N (a label is cut to 11 characters); neither gets a stick',
    );
    expect(result.stdout).toContain('0 stick(s) built');
  });

  it('gives a site whose image cannot be made neither its folder nor an image, saying what to install', async () => {
    const { dir, out } = fixtureCopy('build-no-mkfs');
    const target = out();
    // No /usr/sbin on the PATH: mkfs.vfat is not found.
    const result = await build(dir, target, ['--image', '--limit', 'berlin'], 'fleet.yaml', { PATH: '/usr/bin:/bin' });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `${join(target, 'berlin.img')}:1:1  (file)  the image cannot be made: mkfs.vfat or mcopy is not installed  (install dosfstools and mtools)`,
    );
    expect(existsSync(join(target, 'berlin'))).toBe(false);
    expect(existsSync(join(target, 'berlin.img'))).toBe(false);
  });

  it('gives one located problem per mistake in a CSV inventory and builds only the sites without one', async () => {
    const { dir, out } = fixtureCopy('build-mistakes');
    const head = 'site,name,url,username,fingerprint_sha256,eth1_address,dot1x_identity,dns,ca';
    const fp = 'AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89';
    const row = (site: string, name: string, address = '10.5.2.10/24') =>
      `${site},${name},https://10.5.1.10,admin,${fp},${address},${name},10.5.0.53,certs/fleet-ca.pem`;
    writeFileSync(
      join(dir, 'fleet.csv'),
      [
        head,
        row('good', 'mp-good'),
        row('Bad Site', 'mp-bad-site'), // a site name that is not allowed
        row('dup-a', 'mp-dup'), // a name used twice: both sites refused
        row('dup-b', 'mp-dup'),
        `short,mp-short,https://10.5.1.11`, // fields missing
        row('badaddr', 'mp-badaddr', '10.5.2.300/24'), // the validator's problem, at its cell
        row('nosecret', 'mp-nosecret'), // its secret files are missing
      ].join('\r\n') + '\r\n',
    );
    for (const site of ['good', 'dup-a', 'dup-b', 'badaddr'])
      writeFileSync(join(dir, 'secrets', `admin-${site}`), `Admin-${site}-Pw\n`);
    for (const name of ['mp-good', 'mp-dup', 'mp-badaddr'])
      writeFileSync(join(dir, 'secrets', `dot1x-${name}`), `X-${name}-Pw\n`);
    writeFileSync(
      join(dir, 'template.yaml'),
      readFileSync(join(dir, 'template.yaml'), 'utf8').replace('nameservers: ${dns}', 'nameservers: ["${dns}"]'),
    );
    const target = out();
    const result = await build(dir, target, ['--json'], 'fleet.csv');
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as {
      sticks: { site: string }[];
      problems: { line: number; column: number; message: string }[];
    };
    expect(report.sticks.map((s) => s.site)).toEqual(['good']);
    expect(report.problems.map((p) => `${p.line}:${p.column} ${p.message.replace(/ \(template .*$/, '')}`)).toEqual([
      "3:1 the site name 'Bad Site' is not allowed",
      '6:1 the row has 3 fields; the header has 9',
      `5:7 the monitoring point name 'mp-dup' is used twice: here (site dup-b) and at ${join(dir, 'fleet.csv')}:4:1 (site dup-a); neither site gets a stick`,
      "7:140 mp-badaddr: '10.5.2.300/24' is not a valid address/prefix",
      `8:1 mp-nosecret: the secret 'admin-nosecret' is missing: there is no ${join(dir, 'secrets/admin-nosecret')}`,
      `8:1 mp-nosecret: the secret 'dot1x-mp-nosecret' is missing: there is no ${join(dir, 'secrets/dot1x-mp-nosecret')}`,
    ]);
    expect(readFileSync(join(target, 'sticks.json'), 'utf8')).toContain('"site": "good"');
    for (const site of ['dup-a', 'dup-b', 'short', 'badaddr', 'nosecret'])
      expect(existsSync(join(target, site))).toBe(false);
    expect(result.stdout).not.toMatch(/Admin-\S+-Pw|X-mp-\S+-Pw/);
  });

  it("builds from inventory.md's own template, its MTU under ipv4 and paths from a list, and the stick validates", async () => {
    const { dir, out } = fixtureCopy('spec-template');
    // inventory.md's template, word for word.
    writeFileSync(
      join(dir, 'template.yaml'),
      `name: \${name}
url: \${url}
username: \${username}
password_file: \${secret:admin-\${site}}
tls:
  fingerprint_sha256: "\${fingerprint_sha256}"
service_hostname: \${name}
interfaces:
  eth1:
    ipv4:
      method: static
      address: \${eth1_address}
      nameservers: \${dns}
      mtu: \${mtu:-~}
    dot1x:
      eap: peap
      inner: mschapv2
      identity: \${dot1x_identity}
      password_file: \${secret:dot1x-\${name}}
      ca_cert: \${ca}
paths: \${path_targets}
`,
    );
    const fleet = readFileSync(join(dir, 'fleet.yaml'), 'utf8')
      .replace('dot1x_identity: mp-berlin-01', 'dot1x_identity: mp-berlin-01\n        mtu: 9000')
      .replaceAll(/(dot1x_identity: mp-\w+-\d+)/g, '$1\n        path_targets: [192.0.2.80, app.example.com]');
    writeFileSync(join(dir, 'fleet.yaml'), fleet);
    const target = out();
    const result = await build(dir, target);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const berlin = readFileSync(join(target, 'berlin', 'mpprov.yaml'), 'utf8');
    expect(berlin).toMatch(/^ {10}mtu: 9000$/m);
    expect(berlin).toMatch(/paths:\n\s+- target: 192\.0\.2\.80\n\s+- target: app\.example\.com/);
    expect(readFileSync(join(target, 'paris', 'mpprov.yaml'), 'utf8')).not.toMatch(/mtu/);
    for (const site of ['berlin', 'paris']) {
      const validated = await runCli(['validate', join(target, site)]);
      expect(validated.code, validated.stdout + validated.stderr).toBe(0);
    }
  });
});
