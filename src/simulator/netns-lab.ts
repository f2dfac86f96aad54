import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RealBackendCommands } from './real-backend-prerequisites.js';
import { SimulatorError, SimulatorErrorCode } from './simulator-error.js';

/**
 * One simulator instance's private wire: two network namespaces joined by one veth pair, a
 * temporary folder (mode 0700) and the daemons started in them. Every name starts with
 * `mpsim-<pid>-<n>`, so two simulators never meet. Nothing has an address and nothing leaves
 * the namespaces: both ends of the veth live inside them.
 *
 * Removal is guaranteed on close(), on process exit (also after an uncaught error), and on
 * SIGINT, SIGTERM and SIGHUP. A SIGKILL cannot be caught: the daemons still die with us (setpriv
 * --pdeathsig), and the namespaces and folder of a dead simulator are removed by the next lab
 * that starts on the machine.
 */

export const LAB_PREFIX = 'mpsim';

export interface LabNames {
  /** `mpsim-<pid>-<n>`: every name of this instance starts with it. */
  id: string;
  authNamespace: string;
  supplicantNamespace: string;
  /** The switch's end of the veth (hostapd) and the device's end (wpa_supplicant). */
  authInterface: string;
  supplicantInterface: string;
  authMac: string;
  supplicantMac: string;
  /** The instance's temporary folder, mode 0700. */
  dir: string;
}

export type LabSide = 'auth' | 'supplicant';

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const live = new Set<NetnsLab>();
/** Ids of labs this process has begun and not finished removing: never taken for abandoned ones. */
const ownIds = new Set<string>();
let instances = 0;

export class NetnsLab {
  readonly names: LabNames;
  private readonly commands: RealBackendCommands;
  private readonly daemons = new Set<ChildProcess>();
  private removed = false;

  private constructor(names: LabNames, commands: RealBackendCommands) {
    this.names = names;
    this.commands = commands;
  }

  /** Creates the namespaces, the veth pair (both ends up) and the folder; removes them on failure. */
  static async create(commands: RealBackendCommands): Promise<NetnsLab> {
    instances += 1;
    const id = `${LAB_PREFIX}-${process.pid}-${instances}`;
    ownIds.add(id);
    // Interface names are at most 15 bytes: pid and instance in base 36.
    const short = `mps${process.pid.toString(36)}-${(instances % 36 ** 4).toString(36)}`;
    let dir: string;
    try {
      dir = await mkdtemp(join(tmpdir(), `${id}-`));
    } catch (error) {
      ownIds.delete(id);
      throw error;
    }
    const lab = new NetnsLab(
      {
        id,
        authNamespace: `${id}-auth`,
        supplicantNamespace: `${id}-supp`,
        authInterface: `${short}a`,
        supplicantInterface: `${short}s`,
        authMac: '02:00:00:00:0a:01',
        supplicantMac: '02:00:00:00:0b:01',
        dir,
      },
      commands,
    );
    // Registered before the namespaces exist, so that a signal during creation removes what there is.
    register(lab);
    try {
      await removeAbandoned(commands.ip);
      await lab.build();
    } catch (error) {
      await lab.close();
      throw error;
    }
    return lab;
  }

  private async build(): Promise<void> {
    const n = this.names;
    const steps: string[][] = [
      ['netns', 'add', n.authNamespace],
      ['netns', 'add', n.supplicantNamespace],
      // Created inside the namespaces directly: neither end ever appears in ours.
      [
        'link',
        'add',
        n.authInterface,
        'netns',
        n.authNamespace,
        'address',
        n.authMac,
        'type',
        'veth',
        'peer',
        'name',
        n.supplicantInterface,
        'netns',
        n.supplicantNamespace,
        'address',
        n.supplicantMac,
      ],
      ['-n', n.authNamespace, 'link', 'set', 'lo', 'up'],
      ['-n', n.supplicantNamespace, 'link', 'set', 'lo', 'up'],
    ];
    for (const args of steps) {
      const result = await this.ip(args);
      if (result.code !== 0) {
        throw new SimulatorError(
          SimulatorErrorCode.BackendUnavailable,
          `The real 802.1X backend could not set up its network namespaces: "ip ${args.join(' ')}" failed: ${firstLine(result.stderr) || `exit status ${String(result.code)}`}.`,
        );
      }
    }
    await this.linksUp();
  }

  /**
   * hostapd's wired driver does not bring its interface up, wpa_supplicant's takes its own down
   * when it exits, and a veth carries frames only with both ends up: so before every attempt.
   */
  async linksUp(): Promise<void> {
    const n = this.names;
    for (const [ns, ifname] of [
      [n.authNamespace, n.authInterface],
      [n.supplicantNamespace, n.supplicantInterface],
    ] as const) {
      const result = await this.ip(['-n', ns, 'link', 'set', ifname, 'up']);
      if (result.code !== 0) throw new Error(`ip -n ${ns} link set ${ifname} up failed: ${firstLine(result.stderr)}`);
    }
  }

  /** Starts `command` inside one namespace; its output is piped; it dies with this process. */
  spawnDaemon(side: LabSide, command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
    if (this.removed) throw new Error('the network namespaces are already removed');
    const ns = side === 'auth' ? this.names.authNamespace : this.names.supplicantNamespace;
    const tie = this.commands.setpriv !== undefined ? [this.commands.setpriv, '--pdeathsig', 'KILL', '--'] : [];
    // `ip netns exec` execs the command, so the child's pid is the daemon's own.
    const child = spawn(this.commands.ip, ['netns', 'exec', ns, ...tie, command, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.daemons.add(child);
    child.once('exit', () => this.daemons.delete(child));
    child.once('error', () => this.daemons.delete(child));
    return child;
  }

  /** Runs a short command from our own namespace (the control-socket clients), bounded in time. */
  run(command: string, args: string[], timeoutMs = 3000): Promise<CommandResult> {
    return new Promise((resolve) => {
      execFile(command, args, { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
        const code =
          error === null
            ? 0
            : typeof (error as { code?: unknown }).code === 'number'
              ? (error as { code: number }).code
              : null;
        resolve({ code, stdout, stderr });
      });
    });
  }

  private ip(args: string[]): Promise<CommandResult> {
    return this.run(this.commands.ip, args, 10_000);
  }

  /** Stops the daemons (TERM, then KILL), deletes the namespaces (and so the veth) and the folder. */
  async close(): Promise<void> {
    if (this.removed) return;
    this.removed = true;
    await Promise.all([...this.daemons].map((child) => stopDaemon(child)));
    for (const ns of [this.names.authNamespace, this.names.supplicantNamespace]) {
      // Safety net: whatever still runs in a namespace of ours was started by us.
      const pids = await this.ip(['netns', 'pids', ns]);
      for (const pid of parsePids(pids.stdout)) killQuietly(pid);
      await this.ip(['netns', 'del', ns]);
    }
    await rm(this.names.dir, { recursive: true, force: true });
    live.delete(this);
    ownIds.delete(this.names.id);
    unregisterIfIdle();
  }

  /** The same, synchronously: for process exit and signals, where nothing asynchronous runs any more. */
  closeNow(): void {
    if (this.removed && !live.has(this)) return;
    this.removed = true;
    for (const child of this.daemons) if (child.pid !== undefined) killQuietly(child.pid);
    for (const ns of [this.names.authNamespace, this.names.supplicantNamespace]) {
      const pids = spawnSync(this.commands.ip, ['netns', 'pids', ns], { encoding: 'utf8', timeout: 5000 });
      for (const pid of parsePids(pids.stdout ?? '')) killQuietly(pid);
      spawnSync(this.commands.ip, ['netns', 'del', ns], { timeout: 5000, stdio: 'ignore' });
    }
    try {
      rmSync(this.names.dir, { recursive: true, force: true });
    } catch {
      // An exit handler must not throw; the next lab on the machine removes a folder left here.
    }
    live.delete(this);
    ownIds.delete(this.names.id);
  }
}

/** SIGTERM, up to `graceMs` to exit, then SIGKILL; resolves once the process is gone. */
export async function stopDaemon(child: ChildProcess, graceMs = 1000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function parsePids(text: string): number[] {
  return text
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}

const OWN_NAME = new RegExp(`^(${LAB_PREFIX}-(\\d+)-\\d+)-`);

/**
 * Removes the namespaces, daemons and folders of simulators that died without cleaning up
 * (SIGKILL, power loss). Only names of our own pattern whose process is gone are touched; a
 * name with our own pid that this process did not make is from an earlier process with our pid.
 */
async function removeAbandoned(ip: string): Promise<void> {
  const abandoned = (name: string): boolean => {
    const match = OWN_NAME.exec(name);
    if (match === null) return false;
    const pid = Number(match[2]);
    return pid === process.pid ? !ownIds.has(match[1] ?? '') : !alive(pid);
  };
  const listing = spawnSync(ip, ['netns', 'list'], { encoding: 'utf8', timeout: 5000 });
  for (const ns of (listing.stdout ?? '').split('\n').map((l) => l.split(' ')[0] ?? '')) {
    if (!/-(auth|supp)$/.test(ns) || !abandoned(ns)) continue;
    const pids = spawnSync(ip, ['netns', 'pids', ns], { encoding: 'utf8', timeout: 5000 });
    for (const pid of parsePids(pids.stdout ?? '')) killQuietly(pid);
    spawnSync(ip, ['netns', 'del', ns], { timeout: 5000, stdio: 'ignore' });
  }
  for (const entry of await readdir(tmpdir()).catch(() => [] as string[])) {
    if (abandoned(entry)) await rm(join(tmpdir(), entry), { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------------------------------
// Process-wide cleanup. Handlers exist only while a lab does, so an idle process keeps Node's
// default signal behaviour. Ours run first (prepended); if nobody else listens for the signal
// we re-raise it after cleaning up, so the process still ends as the signal demands; if
// someone does (the `mpprov simulate` command closes gracefully), we leave the ending to them.
// ------------------------------------------------------------------------------------------

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let installed = false;

function closeAllNow(): void {
  for (const lab of [...live]) lab.closeNow();
}

function onSignal(signal: NodeJS.Signals): void {
  const othersListen = process.listenerCount(signal) > 1;
  closeAllNow();
  if (!othersListen) {
    uninstall();
    process.kill(process.pid, signal);
  }
}

const signalHandlers = Object.fromEntries(SIGNALS.map((s) => [s, () => onSignal(s)])) as Record<
  (typeof SIGNALS)[number],
  () => void
>;

function register(lab: NetnsLab): void {
  live.add(lab);
  if (installed) return;
  installed = true;
  process.on('exit', closeAllNow);
  for (const signal of SIGNALS) process.prependListener(signal, signalHandlers[signal]);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  process.removeListener('exit', closeAllNow);
  for (const signal of SIGNALS) process.removeListener(signal, signalHandlers[signal]);
}

function unregisterIfIdle(): void {
  if (live.size === 0) uninstall();
}

/** The labs of this process that are not removed yet (for tests and the simulator's own report). */
export function liveLabs(): LabNames[] {
  return [...live].map((lab) => lab.names);
}

// A copy of core's processAlive: the simulator imports nothing of the product beyond src/admin-api.
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
