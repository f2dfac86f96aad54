import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { ErrorCode, ExitStatus, MpprovError, exitStatusFor, isMpprovError } from '../core/errors.js';
import {
  createRealDot1xBackend,
  DOT1X_BACKENDS,
  loadAuthenticatorProfile,
  loadDeviceDescription,
  parseFault,
  startFleet,
  startSimulator,
  type AuthenticatorProfile,
  type Dot1xBackendName,
  type RealDot1xBackend,
  type SimulatorOptions,
} from '../simulator/index.js';

/**
 * `mpprov simulate`: one simulated Monitoring Point (or a fleet) on loopback until SIGINT or
 * SIGTERM. Parses flags, starts the simulator, prints how to reach it; no logic of its own.
 */

interface SimulateFlags {
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
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description('serve a simulated Monitoring Point (Admin API v1) on loopback, to rehearse a stick or test against')
    .option('--port <n>', 'HTTPS port (default: a free port; fleet: device n gets port + n)')
    .option('--host <address>', 'address to listen on; loopback only unless --allow-remote', '127.0.0.1')
    .option('--allow-remote', 'allow a non-loopback --host')
    .option('--cert <file>', 'TLS certificate (PEM) instead of a self-issued one; needs --key')
    .option('--key <file>', 'private key (PEM) of --cert')
    .option('--username <name>', 'administrative user', 'admin')
    .option('--password <password>', 'administrative password (default: random)')
    .option('--model <name>', 'built-in model: m50 (default), m22, m70, virtual')
    .option('--device <file>', 'device file (YAML or JSON): model, interfaces, starting configuration')
    .option('--mgmt <interface>', 'the interface clients reach the device through', 'eth0')
    .option('--switch <port=spec>', 'switch port facing a physical port: eth0=dot1x:PROFILE.yaml or eth0=open (repeatable)', collect, [])
    .option(
      '--dot1x-backend <name>',
      'who decides 802.1X on those ports: model (in-process) or real (hostapd and wpa_supplicant in network namespaces; needs root)',
      'model',
    )
    .option('--restart-ms <ms>', 'outage after a networking restart', '3000')
    .option('--reboot-ms <ms>', 'outage after a reboot', '15000')
    .option('--fault <spec>', 'inject a fault: KIND[=VALUE][,times=N][@[METHOD ]PATH] (repeatable)', collect, [])
    .option('--no-rate-limit', 'switch off the limit on PUT /service/... (1 per second, 12 per minute)')
    .option('--control-port <n>', 'port of the test-only control server (default: a free port)')
    .option('--devices <n>', 'serve a fleet of N independent devices')
    .option('--manifest <file>', 'fleet: write the manifest (URLs, passwords, fingerprints) to FILE instead of stdout')
    .option('--json', 'print one line of JSON instead of text')
    .action(async (flags: SimulateFlags) => {
      try {
        process.exitCode = await runSimulate(flags);
      } catch (error) {
        if (!isMpprovError(error)) throw error;
        process.stderr.write(`mpprov simulate: ${error.message}\n`);
        process.exitCode = exitStatusFor(error.code);
      }
    });
}

async function runSimulate(flags: SimulateFlags): Promise<number> {
  // Listen for the signals before printing: a supervisor may stop us as soon as it reads the line.
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  const backendName = dot1xBackendName(flags.dot1xBackend);
  const options = await simulatorOptions(flags);
  // Created here rather than by the simulator so that a fleet shares it; closed on every way out.
  // (Its namespaces are also removed on a signal or exit before this finally runs: netns-lab.ts.)
  const backend = backendName === 'real' ? await createRealDot1xBackend() : undefined;
  try {
    if (backend !== undefined) options.dot1xBackend = backend;
    return await serve(flags, options, backend, stopped);
  } finally {
    await backend?.close();
  }
}

async function serve(flags: SimulateFlags, options: SimulatorOptions, backend: RealDot1xBackend | undefined, stopped: Promise<void>): Promise<number> {
  const backendLine = backend?.describe() ?? 'model: decided in-process from certificates and passwords (--dot1x-backend real runs hostapd and wpa_supplicant)';
  const backendName = backend === undefined ? 'model' : 'real';
  let close: () => Promise<void>;
  if (flags.devices !== undefined) {
    const fleet = await startFleet(integer('--devices', flags.devices, 1, 2000), options);
    close = fleet.close;
    if (flags.manifest !== undefined) {
      // The manifest holds every device's password: readable by its owner only.
      await writeFile(flags.manifest, `${JSON.stringify(fleet.manifest, null, 2)}\n`, { mode: 0o600 });
      const line = { devices: fleet.devices.length, manifest: flags.manifest, control_url: fleet.manifest.control_url, dot1x_backend: backendName };
      process.stdout.write(
        flags.json === true
          ? `${JSON.stringify(line)}\n`
          : `${fleet.devices.length} simulated devices; manifest written to ${flags.manifest}; 802.1X: ${backendLine}\n`,
      );
    } else {
      process.stdout.write(`${JSON.stringify({ ...fleet.manifest, dot1x_backend: backendName })}\n`);
    }
  } else {
    const sim = await startSimulator(options);
    close = sim.close;
    const model = sim.state().model;
    if (flags.json === true) {
      const line = {
        url: sim.url,
        api_url: sim.apiUrl,
        username: sim.username,
        password: sim.password,
        fingerprint_sha256: sim.fingerprintSha256,
        control_url: sim.controlUrl,
        model,
        dot1x_backend: sim.dot1xBackend,
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    } else {
      process.stdout.write(
        [
          `Simulated Monitoring Point (model ${model}) listening`,
          `  url:          ${sim.url}`,
          `  api:          ${sim.apiUrl}`,
          `  username:     ${sim.username}`,
          `  password:     ${sim.password}`,
          `  fingerprint:  ${sim.fingerprintSha256}`,
          `  control:      ${sim.controlUrl}  (test-only, unauthenticated)`,
          `  802.1X:       ${backendLine}`,
          'Stop with Ctrl-C.',
          '',
        ].join('\n'),
      );
    }
  }
  await stopped;
  await close();
  return ExitStatus.Ok;
}

async function simulatorOptions(flags: SimulateFlags): Promise<SimulatorOptions> {
  const options: SimulatorOptions = {
    host: flags.host,
    allowRemote: flags.allowRemote === true,
    username: flags.username,
    managementInterface: flags.mgmt,
    restartMs: integer('--restart-ms', flags.restartMs, 0, 3_600_000),
    rebootMs: integer('--reboot-ms', flags.rebootMs, 0, 3_600_000),
    faults: flags.fault.map((spec) => {
      try {
        return parseFault(spec);
      } catch (error) {
        throw new MpprovError(ErrorCode.Usage, error instanceof Error ? error.message : String(error));
      }
    }),
    switchPorts: await switchPorts(flags.switch),
  };
  if (flags.port !== undefined) options.port = integer('--port', flags.port, 0, 65535);
  if (flags.controlPort !== undefined) options.controlPort = integer('--control-port', flags.controlPort, 0, 65535);
  if (flags.password !== undefined) options.password = flags.password;
  if (flags.model !== undefined) options.model = flags.model;
  if (flags.device !== undefined) options.device = await loadDeviceDescription(flags.device);
  if (!flags.rateLimit) options.serviceRateLimit = false;
  if (flags.cert !== undefined || flags.key !== undefined) {
    if (flags.cert === undefined || flags.key === undefined) throw new MpprovError(ErrorCode.Usage, '--cert and --key go together.');
    options.certificatePem = await readText('--cert', flags.cert);
    options.privateKeyPem = await readText('--key', flags.key);
  }
  return options;
}

async function switchPorts(specs: readonly string[]): Promise<Record<string, AuthenticatorProfile>> {
  const ports: Record<string, AuthenticatorProfile> = {};
  for (const spec of specs) {
    const match = /^([A-Za-z][A-Za-z0-9]*)=(?:(open)|dot1x:(.+))$/.exec(spec);
    if (match === null) {
      throw new MpprovError(ErrorCode.Usage, `--switch "${spec}": write PORT=dot1x:PROFILE.yaml or PORT=open.`);
    }
    const [, port = '', open, profile] = match;
    if (open !== undefined) delete ports[port];
    else if (profile !== undefined) ports[port] = await loadAuthenticatorProfile(profile);
  }
  return ports;
}

function dot1xBackendName(text: string): Dot1xBackendName {
  const name = DOT1X_BACKENDS.find((b) => b === text);
  if (name === undefined) throw new MpprovError(ErrorCode.Usage, `--dot1x-backend must be ${DOT1X_BACKENDS.join(' or ')}; "${text}" is not.`);
  return name;
}

function integer(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new MpprovError(ErrorCode.Usage, `${flag} must be an integer from ${min} to ${max}; "${text}" is not.`);
  }
  return value;
}

async function readText(flag: string, file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (cause) {
    throw new MpprovError(ErrorCode.ConfigUnreadable, `Cannot read ${flag} file ${file}.`, { cause });
  }
}
