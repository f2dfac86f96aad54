import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { stopDaemon, type NetnsLab } from './netns-lab.js';
import type { RealBackendCommands } from './real-backend-prerequisites.js';

/**
 * One authentication on the wire, as the real backend runs it (docs/simulator.md): a fresh
 * hostapd (a reused one ignores a station for ~5 s after a failure), a fresh wpa_supplicant, a
 * kick to the authenticator once the supplicant is up (otherwise it waits ~2 s for the
 * supplicant's EAPOL-Start), then both sides' verdicts. Returns what was seen; eap-outcome.ts
 * judges it.
 */

export interface AttemptSetup {
  lab: NetnsLab;
  commands: RealBackendCommands;
  /** The attempt's folder: configuration files and the control-socket clients' sockets. */
  dir: string;
  hostapdConf: string;
  /** hostapd's ctrl_interface directory, as written in hostapdConf. */
  hostapdCtrl: string;
  wpaSupplicantConf: string;
  env: NodeJS.ProcessEnv;
  /** Bound on the whole attempt, from hostapd's start to the EAP result. */
  timeoutMs: number;
  /** Tell hostapd about the station once the supplicant is up (see RealDot1xBackendOptions). */
  kick: boolean;
}

export const SupplicantVerdict = {
  Success: 'success',
  Failure: 'failure',
  Timeout: 'timeout',
  /** wpa_supplicant ended before any EAP result (e.g. it could not read its configuration). */
  Exited: 'exited',
  /** hostapd did not come up; no supplicant was started. */
  NoAuthenticator: 'no-authenticator',
} as const;
export type SupplicantVerdict = (typeof SupplicantVerdict)[keyof typeof SupplicantVerdict];

export interface AttemptObservation {
  verdict: SupplicantVerdict;
  /** hostapd_cli sta <mac> showed flags=[AUTHORIZED]. */
  portAuthorized: boolean;
  hostapdLog: string[];
  supplicantLog: string[];
  timeoutMs: number;
}

const MAX_LOG_LINES = 400;

/** A daemon's output lines, and a way to wait for one of them. */
class DaemonOutput {
  readonly lines: string[] = [];
  private exited = false;
  private readonly waiters = new Set<() => void>();

  constructor(child: ChildProcess) {
    for (const stream of [child.stdout, child.stderr]) {
      if (stream === null) continue;
      createInterface({ input: stream }).on('line', (line) => {
        if (this.lines.length < MAX_LOG_LINES) this.lines.push(line);
        this.wake();
      });
    }
    const end = () => {
      this.exited = true;
      this.wake();
    };
    // 'close', not 'exit': the last lines may still be in the pipe when the process has exited.
    child.once('close', end);
    child.once('error', (error) => {
      this.lines.push(`(could not start: ${error.message})`);
      end();
    });
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves with the first line matching, 'exit' when the daemon ends first, 'timeout' at the deadline. */
  waitFor(test: RegExp, deadline: number): Promise<string> {
    return new Promise((resolve) => {
      const check = () => {
        const hit = this.lines.find((l) => test.test(l));
        const answer = hit ?? (this.exited ? 'exit' : Date.now() >= deadline ? 'timeout' : undefined);
        if (answer === undefined) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(answer);
      };
      // check() reads timer only when it runs: from here on, after timer is set.
      const timer = setTimeout(check, Math.max(0, deadline - Date.now()));
      this.waiters.add(check);
      check();
    });
  }
}

export async function runEapAttempt(setup: AttemptSetup): Promise<AttemptObservation> {
  const { lab, commands } = setup;
  const n = lab.names;
  const deadline = Date.now() + setup.timeoutMs;
  const observation = (
    verdict: SupplicantVerdict,
    portAuthorized: boolean,
    h: DaemonOutput,
    s?: DaemonOutput,
  ): AttemptObservation => ({
    verdict,
    portAuthorized,
    hostapdLog: h.lines,
    supplicantLog: s?.lines ?? [],
    timeoutMs: setup.timeoutMs,
  });
  const cli = (...args: string[]) =>
    lab.run(commands.hostapd_cli, ['-s', setup.dir, '-p', setup.hostapdCtrl, '-i', n.authInterface, ...args]);

  await lab.linksUp();
  const hostapd = lab.spawnDaemon('auth', commands.hostapd, [setup.hostapdConf], setup.env);
  const hostapdOut = new DaemonOutput(hostapd);
  let supplicant: ChildProcess | undefined;
  try {
    const socket = join(setup.hostapdCtrl, n.authInterface);
    while (!existsSync(socket)) {
      if (hostapd.exitCode !== null || hostapd.signalCode !== null || Date.now() >= deadline) {
        return observation(SupplicantVerdict.NoAuthenticator, false, hostapdOut);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    supplicant = lab.spawnDaemon(
      'supplicant',
      commands.wpa_supplicant,
      ['-D', 'wired', '-i', n.supplicantInterface, '-c', setup.wpaSupplicantConf],
      setup.env,
    );
    const supplicantOut = new DaemonOutput(supplicant);
    // Kicked too early, hostapd's EAP-Request/Identity is lost before the supplicant listens.
    const associated = await supplicantOut.waitFor(/Associated with/, deadline);
    if (setup.kick && associated !== 'exit' && associated !== 'timeout') await cli('new_sta', n.supplicantMac);

    // CTRL-REQ-*: the supplicant stops to ask for input (a key's passphrase) that a Monitoring
    // Point never gets, so no EAP result will come: that is final, not worth waiting out.
    const result = await supplicantOut.waitFor(/CTRL-EVENT-EAP-(SUCCESS|FAILURE)|CTRL-REQ-/, deadline);
    const verdict =
      result === 'exit'
        ? SupplicantVerdict.Exited
        : result === 'timeout'
          ? SupplicantVerdict.Timeout
          : result.includes('CTRL-EVENT-EAP-SUCCESS')
            ? SupplicantVerdict.Success
            : SupplicantVerdict.Failure;

    // hostapd sends EAP-Success a moment before it marks the port authorized: ask again briefly.
    let portAuthorized = false;
    for (let i = 0; i < 5; i++) {
      const sta = await cli('sta', n.supplicantMac);
      portAuthorized = /^flags=.*\[AUTHORIZED\]/m.test(sta.stdout);
      if (portAuthorized || verdict !== SupplicantVerdict.Success) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return observation(verdict, portAuthorized, hostapdOut, supplicantOut);
  } finally {
    await Promise.all(
      [supplicant, hostapd].map((child) => (child === undefined ? Promise.resolve() : stopDaemon(child))),
    );
  }
}
