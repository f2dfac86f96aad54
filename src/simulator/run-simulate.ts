import { writeFile } from 'node:fs/promises';
import { createRealDot1xBackend, type RealDot1xBackend } from './dot1x-real-backend.js';
import { MAX_FLEET, startFleet } from './fleet.js';
import {
  dot1xBackendFlag,
  integerFlag,
  readText,
  simulatorOptionsFromFlags,
  type SimulateFlags,
} from './simulate-flags.js';
import { startSimulatedService, type SimulatedServiceSetup } from './service/index.js';
import { startSimulator, type SimulatorOptions } from './simulator.js';

/**
 * `mpprov simulate`: one simulated Monitoring Point (or a fleet) until SIGINT or SIGTERM. Reads
 * the flags, starts the devices, prints how to reach them, and resolves once they are closed
 * after a signal. A refusal to start is a SimulatorError (its `isUsage` tells a command-line
 * mistake from a file or a device that cannot start).
 */
export async function runSimulate(flags: SimulateFlags, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  // Listen for the signals before printing: a supervisor may stop us as soon as it reads the line.
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  const backendName = dot1xBackendFlag(flags.dot1xBackend);
  const options = await simulatorOptionsFromFlags(flags);
  // Created here rather than by the simulator so that a fleet shares it; closed on every way out.
  // (Its namespaces are also removed on a signal or exit before this finally runs: netns-lab.ts.)
  const backend = backendName === 'real' ? await createRealDot1xBackend() : undefined;
  let service: SimulatedServiceSetup | undefined;
  try {
    if (backend !== undefined) options.dot1xBackend = backend;
    if (flags.service === true) {
      service = await startSimulatedService({
        devices: flags.devices === undefined ? 1 : integerFlag('--devices', flags.devices, 1, MAX_FLEET),
        hostname: flags.serviceHostname ?? 'sim-mp',
        reconnectMs: integerFlag('--service-reconnect-ms', flags.serviceReconnectMs ?? '5000', 0, 3_600_000),
        organizations: integerFlag('--service-orgs', flags.serviceOrgs ?? '1', 1, 1000),
        pathDataMs: integerFlag('--service-path-data-ms', flags.servicePathDataMs ?? '3000', 0, 3_600_000),
        legacyShapes: flags.serviceLegacyShapes === true,
        host: options.host,
        port: flags.servicePort === undefined ? undefined : integerFlag('--service-port', flags.servicePort, 0, 65535),
        filesDir: flags.serviceFiles,
        orgAdmin: flags.serviceOrgAdmin === true,
        eventsCaPem:
          flags.serviceEventsCa === undefined
            ? undefined
            : await readText('--service-events-ca', flags.serviceEventsCa),
      });
      // Parsed before anything listens for long: a bad fault stops the start with its sentence.
      service.service.setDeliveryFaults(flags.serviceEventFault ?? []);
      options.hooks = service.hooks;
      options.serviceLog = service.service;
    }
    await serve(flags, options, backend, stopped, out, service);
  } finally {
    await service?.service.close();
    await backend?.close();
  }
}

/** The service's part of the start-up output: for agent.yaml's service block. */
function serviceJson(setup: SimulatedServiceSetup, devices: number): Record<string, unknown> {
  return {
    url: setup.service.url,
    token: setup.service.token,
    ca_pem: setup.service.caPem,
    fingerprint_sha256: setup.fingerprintSha256,
    reconnect_ms: setup.service.reconnectMs,
    path_data_ms: setup.service.pathData.firstDataMs,
    shapes: setup.service.shapes,
    org_admin: setup.orgAdmin,
    hostnames: Array.from({ length: devices }, (_, i) => setup.hostnameOf(i)),
    org_ids: Array.from({ length: devices }, (_, i) => setup.orgIdOf(i)),
    ...(setup.files === undefined ? {} : { token_file: setup.files.token, ca_file: setup.files.ca }),
  };
}

function serviceLines(setup: SimulatedServiceSetup, devices: number): string[] {
  const names = Array.from({ length: Math.min(devices, 3) }, (_, i) => setup.hostnameOf(i)).join(', ');
  return [
    'Simulated monitoring service (data API) listening',
    `  url:          ${setup.service.url}`,
    `  token:        ${setup.service.token}`,
    `  fingerprint:  ${setup.fingerprintSha256}`,
    `  hostnames:    ${names}${devices > 3 ? ', ...' : ''} (UNAVAILABLE from a restart until ${setup.service.reconnectMs} ms after the device answers again)`,
    `  orgIds:       ${[...new Set(Array.from({ length: devices }, (_, i) => setup.orgIdOf(i)))].join(', ')} (MPs round-robin)`,
    `  paths:        first data ${setup.service.pathData.firstDataMs} ms after a path exists and its MP is AVAILABLE; ${setup.service.shapes} shapes`,
    ...(setup.files === undefined
      ? [
          '  CA (save as the file service.tls.ca names):',
          ...setup.service.caPem
            .trimEnd()
            .split('\n')
            .map((l) => `    ${l}`),
        ]
      : [`  token file:   ${setup.files.token}`, `  CA file:      ${setup.files.ca}`]),
    '  agent.yaml:   service: { url: <url>, token_file: <token file>, tls: { ca: <CA file> }, wait_connected_s: 60 }',
  ];
}

async function serve(
  flags: SimulateFlags,
  options: SimulatorOptions,
  backend: RealDot1xBackend | undefined,
  stopped: Promise<void>,
  out: NodeJS.WritableStream,
  service?: SimulatedServiceSetup,
): Promise<void> {
  const backendLine =
    backend?.describe() ??
    'model: decided in-process from certificates and passwords (--dot1x-backend real runs hostapd and wpa_supplicant)';
  const backendName = backend === undefined ? 'model' : 'real';
  const shown = options.showDot1xState ?? options.device?.showDot1xState ?? false;
  const viewLine = shown
    ? "the model's view plus dot1x_state in GET /interface/ (a rehearsal aid; a real device has no such field)"
    : "exactly the model's view (--show-dot1x-state adds dot1x_state, a rehearsal aid)";
  let close: () => Promise<void>;
  if (flags.devices !== undefined) {
    const fleet = await startFleet(integerFlag('--devices', flags.devices, 1, MAX_FLEET), options);
    close = () => fleet.close();
    if (flags.manifest !== undefined) {
      // The manifest holds every device's password: readable by its owner only.
      await writeFile(flags.manifest, `${JSON.stringify(fleet.manifest, null, 2)}\n`, { mode: 0o600 });
      const line = {
        devices: fleet.devices.length,
        manifest: flags.manifest,
        control_url: fleet.manifest.control_url,
        dot1x_backend: backendName,
        show_dot1x_state: shown,
        ...(service === undefined ? {} : { service: serviceJson(service, fleet.devices.length) }),
      };
      out.write(
        flags.json === true
          ? `${JSON.stringify(line)}\n`
          : [
              `${fleet.devices.length} simulated devices; manifest written to ${flags.manifest}; 802.1X: ${backendLine}; API: ${viewLine}`,
              ...(service === undefined ? [] : serviceLines(service, fleet.devices.length)),
              '',
            ].join('\n'),
      );
    } else {
      const line = { ...fleet.manifest, dot1x_backend: backendName, show_dot1x_state: shown };
      out.write(
        `${JSON.stringify(service === undefined ? line : { ...line, service: serviceJson(service, fleet.devices.length) })}\n`,
      );
    }
  } else {
    const sim = await startSimulator(options);
    close = () => sim.close();
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
        show_dot1x_state: sim.showDot1xState,
        ...(service === undefined ? {} : { service: serviceJson(service, 1) }),
      };
      out.write(`${JSON.stringify(line)}\n`);
    } else {
      out.write(
        [
          `Simulated Monitoring Point (model ${model}) listening`,
          `  url:          ${sim.url}`,
          `  api:          ${sim.apiUrl}`,
          `  username:     ${sim.username}`,
          `  password:     ${sim.password}`,
          `  fingerprint:  ${sim.fingerprintSha256}`,
          `  control:      ${sim.controlUrl}  (test-only, unauthenticated)`,
          `  802.1X:       ${backendLine}`,
          `  API view:     ${viewLine}`,
          ...(service === undefined ? [] : serviceLines(service, 1)),
          'Stop with Ctrl-C.',
          '',
        ].join('\n'),
      );
    }
  }
  await stopped;
  await close();
}
