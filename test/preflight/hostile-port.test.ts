import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useLabPki } from '../support/lab-pki.js';
import { tempFolder } from '../support/temp-folder.js';
import { preflightLeftovers, runInLaptop, type CliRun, usePortLab } from './port-lab.js';
import { parseReport, preflightStick } from './preflight-stick.js';

/**
 * The preflight against a hostile switch and a careless technician, in the real port lab: a DHCP
 * server whose answers are wrong on purpose, two preflights on one port at once, names that
 * cannot be an interface. Whatever comes, the run ends in its bounds, prints nothing raw, and
 * leaves the laptop's port with its own addresses and routes.
 */

const pki = useLabPki();
const rig = usePortLab();

const DHCP_ONLY = 'eth1:\n  ipv4: { method: dhcp }';

function preflight(stick: string, timeout = '6'): Promise<CliRun> {
  return runInLaptop(rig.lab, [
    'preflight',
    stick,
    '--port',
    rig.lab.laptopIf,
    '--interface',
    'eth1',
    '--json',
    '--timeout',
    timeout,
  ]);
}

/** No control character but the line breaks between lines: nothing from the server reaches the terminal raw. */
function expectPrintable(run: CliRun): void {
  // eslint-disable-next-line no-control-regex -- the point: no control character
  expect(`${run.stdout}${run.stderr}`.replace(/\n/g, '')).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
}

function expectLaptopAsBefore(run: CliRun): void {
  expect(rig.lab.laptopState()).toEqual(rig.before);
  expect(preflightLeftovers(run.pid, rig.lab.laptopIf)).toEqual({ namespaces: [], dirs: [], daemons: [] });
}

describe('a hostile DHCP server', () => {
  it('offering a netmask that is no prefix: refused as a lease, and said so instead of "no server answered"', async () => {
    // busybox udhcpc counts this mask as /24; the Monitoring Point would get the mask itself.
    await rig.lab.startDhcp(['--dhcp-option=1,255.0.255.0']);
    const run = await preflight(preflightStick(pki, DHCP_ONLY));
    const report = parseReport(run.stdout);
    expect(run.code).toBe(1);
    expect(report.dhcp.outcome).toBe('no-answer');
    expect(report.problems).toEqual([
      `DHCP: a server answered on ${rig.lab.laptopIf}, but its lease is not usable: the netmask "255.0.255.0" is not a prefix from /1 to /32`,
    ]);
    expectPrintable(run);
    expectLaptopAsBefore(run);
  });

  it('offering a /32 prefix with a gateway outside it: reported as given, the gateway found silent, the routes untouched', async () => {
    await rig.lab.startDhcp(['--dhcp-option=option:netmask,255.255.255.255', '--dhcp-option=option:router,10.99.0.1']);
    const run = await preflight(preflightStick(pki, DHCP_ONLY));
    const report = parseReport(run.stdout);
    expect([0, 1]).toContain(run.code);
    expect(report.dhcp.outcome).toBe('address');
    expect(report.dhcp.address).toMatch(/^10\.29\.0\.\d+\/32$/);
    expect(report.dhcp.gateway).toBe('10.99.0.1');
    expectPrintable(run);
    expectLaptopAsBefore(run);
  });

  it('naming 60 DNS servers (what one DHCP option holds) and a domain with control characters: addresses only, nothing raw', async () => {
    const many = Array.from({ length: 60 }, (_, i) => `10.29.${1 + Math.floor(i / 50)}.${1 + (i % 50)}`);
    await rig.lab.startDhcp([
      `--dhcp-option=option:dns-server,${many.join(',')}`,
      '--dhcp-option=option:domain-name,ev\u001b[31mil\u0007.lab',
    ]);
    const run = await preflight(preflightStick(pki, DHCP_ONLY));
    const report = parseReport(run.stdout);
    expect(run.code).toBe(0);
    expect(report.dhcp.dns).toEqual(many);
    expectPrintable(run);
    expectLaptopAsBefore(run);
  });
});

describe('a hostile stick', () => {
  it('an 802.1X identity too long for a supplicant configuration line: refused by name, the port untried', async () => {
    const identity = `${'a'.repeat(2_100)}"\n\teap=MD5`;
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: dhcp }\n  dot1x: { eap: md5, identity: ${JSON.stringify(identity)}, password: "x" }`,
    );
    const run = await preflight(stick);
    const report = parseReport(run.stdout);
    expect(run.code).toBe(1);
    expect(report.dot1x).toEqual({
      outcome: 'error',
      method: 'EAP-MD5',
      cause:
        "the stick's 802.1X value for wpa_supplicant's identity is too long for its configuration (a line holds at most 1 999 bytes), so the port was not tried",
    });
    expectPrintable(run);
    expectLaptopAsBefore(run);
  });
});

describe('a laptop port set up by NetworkManager', () => {
  it('gets its noprefixroute address back with the flag: no route appears that it had not', async () => {
    const ipLaptop = (args: string[]) => spawnSync('ip', ['-n', rig.lab.laptopNs, ...args], { encoding: 'utf8' });
    const routes = () => ipLaptop(['route', 'show']).stdout;
    expect(ipLaptop(['addr', 'add', '10.55.0.5/24', 'dev', rig.lab.laptopIf, 'noprefixroute']).status).toBe(0);
    try {
      const routesBefore = routes();
      const run = await runInLaptop(rig.lab, [
        'preflight',
        preflightStick(pki, 'eth1:\n  ipv4: { method: static, address: 10.29.0.20/24, gateway: 10.29.0.1 }'),
        '--port',
        rig.lab.laptopIf,
        '--interface',
        'eth1',
        '--json',
      ]);
      expect(run.code).toBe(0);
      expect(routes()).toBe(routesBefore);
      expect(ipLaptop(['-j', 'addr', 'show', 'dev', rig.lab.laptopIf]).stdout).toContain(
        '"local":"10.55.0.5","prefixlen":24,"scope":"global","noprefixroute":true',
      );
    } finally {
      ipLaptop(['addr', 'del', '10.55.0.5/24', 'dev', rig.lab.laptopIf]);
    }
    expect(rig.lab.laptopState()).toEqual(rig.before);
  });
});

describe('a laptop port with a DHCP client address', () => {
  it('gets the address back with its lifetime, and the route through its subnet with it', async () => {
    const ipLaptop = (args: string[]) => spawnSync('ip', ['-n', rig.lab.laptopNs, ...args], { encoding: 'utf8' });
    const dev = rig.lab.laptopIf;
    expect(
      ipLaptop(['addr', 'add', '10.31.0.5/24', 'dev', dev, 'valid_lft', '3000', 'preferred_lft', '3000']).status,
    ).toBe(0);
    expect(ipLaptop(['route', 'add', '10.88.0.0/16', 'via', '10.31.0.1', 'dev', dev, 'proto', 'dhcp']).status).toBe(0);
    try {
      const routesBefore = ipLaptop(['route', 'show']).stdout;
      const run = await runInLaptop(rig.lab, [
        'preflight',
        preflightStick(pki, 'eth1:\n  ipv4: { method: static, address: 10.29.0.20/24, gateway: 10.29.0.1 }'),
        '--port',
        dev,
        '--interface',
        'eth1',
        '--json',
      ]);
      expect(parseReport(run.stdout).problems).toEqual([]);
      expect(run.code).toBe(0);
      expect(ipLaptop(['route', 'show']).stdout).toBe(routesBefore);
      const address = (
        JSON.parse(ipLaptop(['-j', 'addr', 'show', 'dev', dev]).stdout) as {
          addr_info: { local: string; dynamic?: boolean; valid_life_time: number }[];
        }[]
      )[0]?.addr_info.find((a) => a.local === '10.31.0.5');
      expect(address?.dynamic).toBe(true);
      expect(address?.valid_life_time).toBeLessThanOrEqual(3000);
    } finally {
      ipLaptop(['route', 'del', '10.88.0.0/16', 'via', '10.31.0.1', 'dev', dev]);
      ipLaptop(['addr', 'del', '10.31.0.5/24', 'dev', dev]);
    }
    expect(rig.lab.laptopState()).toEqual(rig.before);
  });
});

describe('a laptop port that is a port of a bridge', () => {
  it('goes back into its bridge', async () => {
    const ipLaptop = (args: string[]) => spawnSync('ip', ['-n', rig.lab.laptopNs, ...args], { encoding: 'utf8' });
    const masterOf = () =>
      (JSON.parse(ipLaptop(['-j', 'link', 'show', 'dev', rig.lab.laptopIf]).stdout) as { master?: string }[])[0]
        ?.master;
    expect(ipLaptop(['link', 'add', 'pflbr0', 'type', 'bridge']).status).toBe(0);
    try {
      expect(ipLaptop(['link', 'set', rig.lab.laptopIf, 'master', 'pflbr0']).status).toBe(0);
      expect(masterOf()).toBe('pflbr0');
      const run = await runInLaptop(rig.lab, [
        'preflight',
        preflightStick(pki, 'eth1:\n  ipv4: { method: static, address: 10.29.0.20/24, gateway: 10.29.0.1 }'),
        '--port',
        rig.lab.laptopIf,
        '--interface',
        'eth1',
        '--json',
      ]);
      expect(parseReport(run.stdout).problems).toEqual([]);
      expect(masterOf()).toBe('pflbr0');
    } finally {
      ipLaptop(['link', 'set', rig.lab.laptopIf, 'nomaster']);
      ipLaptop(['link', 'del', 'pflbr0']);
    }
    expect(rig.lab.laptopState()).toEqual(rig.before);
  });
});

describe('two preflights on one port', () => {
  it('the second refuses in one sentence while the first holds the port, which it then gives back', async () => {
    // No authenticator: the first waits its whole timeout for one, holding the port.
    const stick = preflightStick(
      pki,
      'eth1:\n  ipv4: { method: dhcp }\n  dot1x: { eap: md5, identity: md5user, password: "x" }',
    );
    let second: Promise<CliRun> | undefined;
    const first = await runInLaptop(
      rig.lab,
      ['preflight', stick, '--port', rig.lab.laptopIf, '--interface', 'eth1', '--json', '--timeout', '8'],
      (stderr) => {
        if (second === undefined && /802\.1X: trying/.test(stderr)) second = preflight(stick);
      },
    );
    expect(second).toBeDefined();
    const other = await (second as Promise<CliRun>);
    const report = parseReport(other.stdout);
    expect(other.code).toBe(1);
    expect(report.problems).toEqual([
      `another preflight (process ${first.pid}) is trying ${rig.lab.laptopIf} now: run this one once it has given the port back`,
    ]);
    expect(other.stderr).not.toMatch(/taking .* into a network namespace/);
    expect(parseReport(first.stdout).dot1x.outcome).toBe('no-authenticator');
    expectLaptopAsBefore(first);
    expectLaptopAsBefore(other);
  });
});

describe('a killed run whose process number another process has taken since', () => {
  it('is abandoned all the same: its folder with the secrets goes at the next run, which says so', async () => {
    // Started after the folder was last written: the pid is another process's now, as after a power loss.
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    // A TMPDIR of its own: no other preflight on this machine sees the folder planted there.
    const temp = tempFolder('hostile-tmpdir');
    const dir = join(temp, `mppf-${String(other.pid)}-1-hostile`);
    try {
      mkdirSync(dir, { mode: 0o700 });
      writeFileSync(join(dir, 'wpa_supplicant.conf'), 'network={\n\tpassword="left-behind"\n}\n', { mode: 0o600 });
      const anHourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(dir, anHourAgo, anHourAgo);
      const stick = preflightStick(pki, DHCP_ONLY);
      const child = rig.lab.startCli(
        ['preflight', stick, '--port', 'pflnone0', '--interface', 'eth1', '--json'],
        undefined,
        {
          TMPDIR: temp,
        },
      );
      let stdout = '';
      child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr?.resume();
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      expect(code).toBe(64);
      expect(existsSync(dir)).toBe(false);
      expect(parseReport(stdout).problems).toEqual([
        `an interrupted preflight had left its private folder ${dir}: removed it`,
        'this laptop has no interface "pflnone0"',
      ]);
    } finally {
      other.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a name that cannot be an interface', () => {
  it.each(['../x', 'eth0;rm -rf /', 'a-name-of-16-byte', 'eth0\u001b[2J', '-i'])(
    '%j is a usage error before anything is tried',
    async (name) => {
      const run = await runInLaptop(rig.lab, [
        'preflight',
        preflightStick(pki, DHCP_ONLY),
        `--port=${name}`,
        '--interface',
        'eth1',
        '--json',
      ]);
      expect(run.code).toBe(64);
      expect(parseReport(run.stdout).problems).toEqual([
        expect.stringMatching(/^".*" cannot be a network interface's name/),
      ]);
      expectPrintable(run);
      expectLaptopAsBefore(run);
    },
  );
});
