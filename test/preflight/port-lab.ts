import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { assertRealBackendCanRun } from '../dot1x/real-lab.js';
import { cliPath, repoRoot } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * The preflight's real lab: a namespace that plays the switch (hostapd, wired driver, with its
 * internal EAP server as RADIUS; dnsmasq as the DHCP server; the gateway's address) and one that
 * plays the technician's laptop, joined by a veth. The CLI runs inside the laptop's namespace, so
 * "the laptop's network" it must leave unchanged is that namespace, never the machine's own.
 * Every name starts with `pfl-<pid>-<n>` (interfaces `pfl<pid36><n>s|l`); close() removes them,
 * and the next lab removes those of a test process that died.
 */

export const GATEWAY = '10.29.0.1';
export const DNS = '10.29.0.53';
export const PEAP_PASSWORD = 'Peap-Preflight-Secret-9931';
export const MD5_PASSWORD = 'Md5-Preflight-Secret-5521';
/** The laptop port's own address and route before any preflight: they must be there afterwards. */
export const LAPTOP_ADDRESS = '10.29.7.5/24';
export const LAPTOP_ROUTE = '10.77.0.0/16';

const EAP_USERS = `"client.lab.test"\tTLS
"md5user"\tMD5\t"${MD5_PASSWORD}"
*\tPEAP
"alice"\tMSCHAPV2\t"${PEAP_PASSWORD}"\t[2]
"client.lab.test"\tTLS\t[2]
`;

let labs = 0;

function ip(args: readonly string[]): string {
  const result = spawnSync('ip', args, { encoding: 'utf8', timeout: 10_000 });
  if (result.status !== 0) throw new Error(`ip ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Namespaces of labs whose test process is gone. */
function removeAbandonedLabs(): void {
  for (const ns of spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout.split('\n')) {
    const name = ns.split(' ')[0] ?? '';
    const match = /^pfl-(\d+)-\d+-(sw|lp)$/.exec(name);
    if (match === null || alive(Number(match[1]))) continue;
    for (const pid of spawnSync('ip', ['netns', 'pids', name], { encoding: 'utf8' }).stdout.split('\n'))
      if (/^\d+$/.test(pid.trim())) process.kill(Number(pid), 'SIGKILL');
    spawnSync('ip', ['netns', 'del', name]);
  }
}

export interface LaptopState {
  addresses: string[];
  routes: string[];
  up: boolean;
}

export class PortLab {
  readonly id: string;
  readonly switchNs: string;
  readonly laptopNs: string;
  readonly switchIf: string;
  readonly laptopIf: string;
  readonly dir = tempFolder('port-lab');
  private readonly daemons = new Set<ChildProcess>();

  constructor() {
    labs += 1;
    this.id = `pfl-${process.pid}-${labs}`;
    this.switchNs = `${this.id}-sw`;
    this.laptopNs = `${this.id}-lp`;
    const short = `pfl${process.pid.toString(36)}${labs.toString(36)}`;
    this.switchIf = `${short}s`;
    this.laptopIf = `${short}l`;
    removeAbandonedLabs();
    ip(['netns', 'add', this.switchNs]);
    ip(['netns', 'add', this.laptopNs]);
    ip([
      'link',
      'add',
      this.switchIf,
      'netns',
      this.switchNs,
      'type',
      'veth',
      'peer',
      'name',
      this.laptopIf,
      'netns',
      this.laptopNs,
    ]);
    for (const ns of [this.switchNs, this.laptopNs]) ip(['-n', ns, 'link', 'set', 'lo', 'up']);
    ip(['-n', this.switchNs, 'link', 'set', this.switchIf, 'up']);
    ip(['-n', this.switchNs, 'addr', 'add', `${GATEWAY}/24`, 'dev', this.switchIf]);
    ip(['-n', this.laptopNs, 'link', 'set', this.laptopIf, 'up']);
    ip(['-n', this.laptopNs, 'addr', 'add', LAPTOP_ADDRESS, 'dev', this.laptopIf]);
    ip(['-n', this.laptopNs, 'route', 'add', LAPTOP_ROUTE, 'via', '10.29.7.1', 'dev', this.laptopIf]);
  }

  /** The laptop port's addresses, routes and link state, as `ip` shows them. */
  laptopState(): LaptopState {
    const addr = JSON.parse(ip(['-n', this.laptopNs, '-j', 'addr', 'show', 'dev', this.laptopIf])) as {
      flags: string[];
      addr_info: { family: string; local: string; prefixlen: number; scope: string }[];
    }[];
    const routes = JSON.parse(ip(['-n', this.laptopNs, '-j', 'route', 'show'])) as { dst: string; gateway?: string }[];
    return {
      up: addr[0]?.flags.includes('UP') ?? false,
      addresses: (addr[0]?.addr_info ?? [])
        .filter((a) => a.scope !== 'link')
        .map((a) => `${a.local}/${a.prefixlen}`)
        .sort(),
      routes: routes.map((r) => `${r.dst}${r.gateway === undefined ? '' : ` via ${r.gateway}`}`).sort(),
    };
  }

  private daemon(args: readonly string[]): ChildProcess {
    const child = spawn('ip', ['netns', 'exec', this.switchNs, 'setpriv', '--pdeathsig', 'KILL', '--', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.resume();
    child.stderr?.resume();
    this.daemons.add(child);
    child.once('exit', () => this.daemons.delete(child));
    return child;
  }

  /**
   * hostapd on the switch's end: wired driver, 802.1X, its internal EAP server with the lab PKI.
   * `radius` instead: no EAP server of its own, the exchange forwarded to a RADIUS server at
   * that loopback port of the switch's namespace (one that never answers, for a hostile switch).
   */
  async startAuthenticator(pkiDir: string, radius?: { port: number }): Promise<void> {
    const users = join(this.dir, 'hostapd.eap_user');
    const conf = join(this.dir, 'hostapd.conf');
    writeFileSync(users, EAP_USERS, { mode: 0o600 });
    writeFileSync(
      conf,
      [
        `interface=${this.switchIf}`,
        'driver=wired',
        `ctrl_interface=${join(this.dir, 'hostapd-ctrl')}`,
        'logger_stdout=-1',
        'logger_stdout_level=1',
        'ieee8021x=1',
        'eapol_version=2',
        'use_pae_group_addr=1',
        'eap_reauth_period=0',
        ...(radius === undefined
          ? [
              'eap_server=1',
              `eap_user_file=${users}`,
              `ca_cert=${join(pkiDir, 'ca.pem')}`,
              `server_cert=${join(pkiDir, 'server.pem')}`,
              `private_key=${join(pkiDir, 'server.key')}`,
              'server_id=radius.lab.test',
            ]
          : [
              'eap_server=0',
              'own_ip_addr=127.0.0.1',
              'auth_server_addr=127.0.0.1',
              `auth_server_port=${radius.port}`,
              'auth_server_shared_secret=lab-radius-secret',
            ]),
        '',
      ].join('\n'),
    );
    this.daemon(['hostapd', conf]);
    const socket = join(this.dir, 'hostapd-ctrl', this.switchIf);
    for (let i = 0; i < 250 && !existsSync(socket); i++) await new Promise((r) => setTimeout(r, 20));
    if (!existsSync(socket)) throw new Error('hostapd did not start in the port lab');
  }

  /**
   * dnsmasq as the port's DHCP server: addresses .100-.150 of 10.29.0.0/24, the gateway and a DNS
   * server. `overrides` replace the default of the same option (`--dhcp-range=`, `--dhcp-option=option:router,`)
   * or add one: a hostile server's answers.
   */
  async startDhcp(overrides: readonly string[] = []): Promise<void> {
    const key = (arg: string) => /^--[a-z-]+=(option:[a-z-]+,)?/.exec(arg)?.[0] ?? arg;
    const defaults = [
      '--dhcp-range=10.29.0.100,10.29.0.150,255.255.255.0,1h',
      `--dhcp-option=option:router,${GATEWAY}`,
      `--dhcp-option=option:dns-server,${DNS}`,
    ].filter((arg) => !overrides.some((o) => key(o) === key(arg)));
    this.daemon([
      'dnsmasq',
      '--keep-in-foreground',
      '--conf-file=/dev/null',
      '--port=0',
      '--user=root',
      '--bind-interfaces',
      `--interface=${this.switchIf}`,
      '--except-interface=lo',
      ...defaults,
      ...overrides,
      `--dhcp-leasefile=${join(this.dir, 'leases')}`,
      '--pid-file=',
      // No ping check of an address before offering it: the offer comes at once.
      '--no-ping',
    ]);
    await new Promise((r) => setTimeout(r, 300));
  }

  /** The switch's end of the cable pulled (`down`) or plugged back. */
  setSwitchPort(state: 'up' | 'down'): void {
    ip(['-n', this.switchNs, 'link', 'set', this.switchIf, state]);
  }

  /** Stops hostapd and dnsmasq: each case starts the ones it needs afresh. */
  async stopDaemons(): Promise<void> {
    await Promise.all(
      [...this.daemons].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
  }

  /**
   * `mpprov ARGS` inside the laptop's network namespace, started (not awaited). nsenter, not `ip
   * netns exec`: that one also gives the process a mount namespace of its own, and a namespace the
   * preflight names there would vanish with a killed run instead of waiting for the next one.
   */
  startCli(args: readonly string[], script = cliPath, env: NodeJS.ProcessEnv = {}): ChildProcess {
    return spawn('nsenter', [`--net=/run/netns/${this.laptopNs}`, process.execPath, script, ...args], {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  close(): void {
    for (const child of this.daemons) child.kill('SIGKILL');
    for (const ns of [this.switchNs, this.laptopNs]) {
      for (const pid of spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout.split('\n'))
        if (/^\d+$/.test(pid.trim())) process.kill(Number(pid), 'SIGKILL');
      spawnSync('ip', ['netns', 'del', ns]);
    }
  }
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  pid: number;
}

/** Runs the CLI in the laptop to its end; `onStderr` sees stderr as it comes (to kill it mid-phase). */
export function runInLaptop(
  lab: PortLab,
  args: readonly string[],
  onStderr?: (text: string, child: ChildProcess) => void,
  script?: string,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = lab.startCli(args, script);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      onStderr?.(stderr, child);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, pid: child.pid ?? 0 }));
  });
}

/** What a preflight process may have left: namespaces, private folders, daemons on the port. */
export function preflightLeftovers(
  pid: number,
  laptopIf: string,
): { namespaces: string[]; dirs: string[]; daemons: string[] } {
  const prefix = `mppf-${pid}-`;
  const namespaces = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .stdout.split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((n) => n.startsWith(prefix));
  const dirs = readdirSync(tmpdir()).filter((e) => e.startsWith(prefix));
  const daemons: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    } catch {
      continue;
    }
    if (cmdline.includes(prefix) || (cmdline.includes(` ${laptopIf}`) && !cmdline.includes('preflight')))
      daemons.push(`${entry}: ${cmdline}`);
  }
  return { namespaces, dirs, daemons };
}

/** A test file's lab and the laptop's port as the lab found it, which every test expects back. */
export interface PortRig {
  readonly lab: PortLab;
  readonly before: LaptopState;
}

/**
 * The lab of a test file: made once before its tests (after checking the real backend can run),
 * its daemons stopped after each test (then `afterEachTest`, when given), torn down after all.
 */
export function usePortLab(afterEachTest?: (lab: PortLab) => void): PortRig {
  let lab: PortLab | undefined;
  let before: LaptopState | undefined;
  beforeAll(() => {
    assertRealBackendCanRun();
    lab = new PortLab();
    before = lab.laptopState();
  });
  afterEach(async () => {
    await lab?.stopDaemons();
    if (lab !== undefined) afterEachTest?.(lab);
  });
  afterAll(() => lab?.close());
  const made = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the port lab is made in beforeAll: use it inside a test');
    return value;
  };
  return {
    get lab() {
      return made(lab);
    },
    get before() {
      return made(before);
    },
  };
}
