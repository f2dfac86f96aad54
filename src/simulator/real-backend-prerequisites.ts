import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { SimulatorError, SimulatorErrorCode } from './simulator-error.js';

/**
 * What the real 802.1X backend needs from the machine: root (network namespaces and veths) and
 * the commands of three Debian packages. Asked for explicitly, the backend never falls back to
 * the model: it fails with one sentence naming what is missing.
 */

const REQUIRED = [
  { command: 'ip', pkg: 'iproute2' },
  { command: 'hostapd', pkg: 'hostapd' },
  { command: 'hostapd_cli', pkg: 'hostapd' },
  { command: 'wpa_supplicant', pkg: 'wpasupplicant' },
] as const;

export interface RealBackendCommands {
  ip: string;
  hostapd: string;
  hostapd_cli: string;
  wpa_supplicant: string;
  /** util-linux's setpriv: ties each daemon's life to ours (PR_SET_PDEATHSIG). Optional. */
  setpriv: string | undefined;
}

export interface PrerequisiteCheck {
  commands: Partial<RealBackendCommands>;
  /** One sentence naming everything missing; undefined when the backend can run. */
  missing: string | undefined;
}

/** Root's PATH has the sbin folders; a user's often does not, so they are searched as well. */
function searchPath(): string[] {
  const fromEnv = (process.env.PATH ?? '').split(delimiter).filter((p) => p !== '');
  return [...new Set([...fromEnv, '/usr/local/sbin', '/usr/sbin', '/sbin', '/usr/local/bin', '/usr/bin', '/bin'])];
}

function findCommand(command: string): string | undefined {
  for (const dir of searchPath()) {
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/** What the check looks at; tests pass their own. */
export interface PrerequisiteProbe {
  uid: number;
  find(command: string): string | undefined;
}

const thisMachine = (): PrerequisiteProbe => ({ uid: process.getuid?.() ?? -1, find: findCommand });

export function checkRealBackendPrerequisites(probe: PrerequisiteProbe = thisMachine()): PrerequisiteCheck {
  const commands: Partial<RealBackendCommands> = { setpriv: probe.find('setpriv') };
  const missingCommands: (typeof REQUIRED)[number][] = [];
  for (const required of REQUIRED) {
    const path = probe.find(required.command);
    if (path === undefined) missingCommands.push(required);
    else commands[required.command] = path;
  }
  const uid = probe.uid;
  const needs: string[] = [];
  if (uid !== 0) needs.push(`root (this process runs as uid ${uid})`);
  if (missingCommands.length > 0) {
    const packages = [...new Set(missingCommands.map((m) => m.pkg))];
    needs.push(
      `the command${missingCommands.length > 1 ? 's' : ''} ${missingCommands.map((m) => m.command).join(', ')} ` +
        `(install with: apt-get install ${packages.join(' ')})`,
    );
  }
  return {
    commands,
    missing: needs.length === 0 ? undefined : `The real 802.1X backend needs ${needs.join(' and ')}.`,
  };
}

/** The commands, or a SimulatorError (BackendUnavailable) whose message is the one sentence naming what is missing. */
export function requireRealBackend(): RealBackendCommands {
  const check = checkRealBackendPrerequisites();
  if (check.missing !== undefined) throw new SimulatorError(SimulatorErrorCode.BackendUnavailable, check.missing);
  return check.commands as RealBackendCommands;
}
