import { readFile } from 'node:fs/promises';
import { loadAuthenticatorProfile, type AuthenticatorProfile } from './authenticator-profile.js';
import { loadDeviceDescription } from './device-description.js';
import { parseFault } from './faults.js';
import { SimulatorError, SimulatorErrorCode, unreadableFile } from './simulator-error.js';
import { DOT1X_BACKENDS, type Dot1xBackendName, type SimulatorOptions } from './simulator.js';

/**
 * The options of `mpprov simulate` as the command line gives them (strings, as commander hands
 * them over), and their reading into SimulatorOptions: numbers checked, files read, profiles
 * loaded. Every refusal is a SimulatorError whose message is the one sentence the command prints.
 */
export interface SimulateFlags {
  port?: string;
  host: string;
  allowRemote?: boolean;
  cert?: string;
  key?: string;
  username: string;
  password?: string;
  model?: string;
  device?: string;
  mgmt: string;
  switch: string[];
  restartMs: string;
  rebootMs: string;
  fault: string[];
  controlPort?: string;
  devices?: string;
  manifest?: string;
  json?: boolean;
  rateLimit: boolean;
  dot1xBackend: string;
  /** `--show-dot1x-state`: a rehearsal aid beyond the model, off unless given. */
  showDot1xState?: boolean;
  /** `--service`: the simulated monitoring service beside the devices. */
  service?: boolean;
  serviceReconnectMs?: string;
  serviceHostname?: string;
  servicePort?: string;
  serviceFiles?: string;
  /** `--service-orgs K`: organizations the MPs are spread over, round-robin. */
  serviceOrgs?: string;
  /** `--service-path-data-ms`: delay to a path's first data. */
  servicePathDataMs?: string;
  /** `--service-legacy-shapes`: the earlier model's shapes, for tolerance tests. */
  serviceLegacyShapes?: boolean;
  /** `--service-org-admin`: the service's token is an Organization Admin's. */
  serviceOrgAdmin?: boolean;
  /** `--service-events-ca FILE`: a CA HTTPS event receivers' certificates may come from. */
  serviceEventsCa?: string;
  /** `--service-event-fault SPEC`, repeated: event delivery faults (service/delivery-faults.ts). */
  serviceEventFault?: string[];
}

export async function simulatorOptionsFromFlags(flags: SimulateFlags): Promise<SimulatorOptions> {
  const options: SimulatorOptions = {
    host: flags.host,
    allowRemote: flags.allowRemote === true,
    username: flags.username,
    managementInterface: flags.mgmt,
    restartMs: integerFlag('--restart-ms', flags.restartMs, 0, 3_600_000),
    rebootMs: integerFlag('--reboot-ms', flags.rebootMs, 0, 3_600_000),
    // parseFault throws FaultSyntaxError, a SimulatorError with its own sentence.
    faults: flags.fault.map((spec) => parseFault(spec)),
    switchPorts: await switchPorts(flags.switch),
  };
  if (flags.port !== undefined) options.port = integerFlag('--port', flags.port, 0, 65535);
  if (flags.controlPort !== undefined) options.controlPort = integerFlag('--control-port', flags.controlPort, 0, 65535);
  if (flags.password !== undefined) options.password = flags.password;
  if (flags.model !== undefined) options.model = flags.model;
  if (flags.device !== undefined) options.device = await loadDeviceDescription(flags.device);
  if (!flags.rateLimit) options.serviceRateLimit = false;
  // Only when given: without the flag a device file's show_dot1x_state decides.
  if (flags.showDot1xState === true) options.showDot1xState = true;
  if (flags.cert !== undefined || flags.key !== undefined) {
    if (flags.cert === undefined || flags.key === undefined)
      throw new SimulatorError(SimulatorErrorCode.Usage, '--cert and --key go together.');
    options.certificatePem = await readText('--cert', flags.cert);
    options.privateKeyPem = await readText('--key', flags.key);
  }
  return options;
}

/** `--switch eth0=dot1x:port.yaml` or `--switch eth0=open`, repeated; a later one for a port wins. */
async function switchPorts(specs: readonly string[]): Promise<Record<string, AuthenticatorProfile>> {
  const ports: Record<string, AuthenticatorProfile> = {};
  for (const spec of specs) {
    const match = /^([A-Za-z][A-Za-z0-9]*)=(?:(open)|dot1x:(.+))$/.exec(spec);
    if (match === null) {
      throw new SimulatorError(
        SimulatorErrorCode.Usage,
        `--switch "${spec}": write PORT=dot1x:PROFILE.yaml or PORT=open.`,
      );
    }
    const [, port = '', open, profile] = match;
    if (open !== undefined) delete ports[port];
    else if (profile !== undefined) ports[port] = await loadAuthenticatorProfile(profile);
  }
  return ports;
}

export function dot1xBackendFlag(text: string): Dot1xBackendName {
  const name = DOT1X_BACKENDS.find((b) => b === text);
  if (name === undefined) {
    throw new SimulatorError(
      SimulatorErrorCode.Usage,
      `--dot1x-backend must be ${DOT1X_BACKENDS.join(' or ')}; "${text}" is not.`,
    );
  }
  return name;
}

export function integerFlag(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new SimulatorError(
      SimulatorErrorCode.Usage,
      `${flag} must be an integer from ${min} to ${max}; "${text}" is not.`,
    );
  }
  return value;
}

export async function readText(flag: string, file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (cause) {
    throw unreadableFile(`${flag} file`, file, cause);
  }
}
