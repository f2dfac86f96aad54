import { X509Certificate } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DeviceEventHooks } from '../simulated-device.js';
import { startServiceSimulator, type ServiceSimulator } from './service-simulator.js';

/**
 * `mpprov simulate --service`: the simulated monitoring service beside the simulated MPs, each
 * MP registered under a hostname and its connectionStatus following its device's outages
 * through the device's event hooks (restart began, answering again, management 802.1X failed).
 */

export interface SimulatedServiceSetup {
  service: ServiceSimulator;
  /** Hostname of the device with this index. */
  hostnameOf(index: number): string;
  hooks: DeviceEventHooks;
  /** The service's certificate's SHA-256, as `AA:BB:...`. */
  fingerprintSha256: string;
  /** When asked for: where the token and the CA were written, for agent.yaml. */
  files?: { token: string; ca: string } | undefined;
}

export async function startSimulatedService(options: {
  devices: number;
  /** The single MP's hostname, or the fleet's prefix (`PREFIX-1` ...). */
  hostname: string;
  reconnectMs: number;
  host?: string | undefined;
  port?: number | undefined;
  /** Write `service-token` and `service-ca.pem` here (owner-only). */
  filesDir?: string | undefined;
}): Promise<SimulatedServiceSetup> {
  const service = await startServiceSimulator({
    reconnectMs: options.reconnectMs,
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
    tokens: [{ label: 'simulate' }],
  });
  const hostnameOf = (index: number): string =>
    options.devices === 1 ? options.hostname : `${options.hostname}-${index + 1}`;
  for (let index = 0; index < options.devices; index++) {
    service.registerAppliance({ hostname: hostnameOf(index), macAddress: macOf(index), connectionStatus: 'AVAILABLE' });
  }
  const hooks: DeviceEventHooks = {
    restartStarted: (index) => service.restartStarted(hostnameOf(index)),
    answeringAgain: (index) => service.answeringAgain(hostnameOf(index)),
    managementDot1xFailed: (index) => service.managementDot1xFailed(hostnameOf(index)),
  };
  let files: SimulatedServiceSetup['files'];
  if (options.filesDir !== undefined) {
    await mkdir(options.filesDir, { recursive: true, mode: 0o700 });
    files = { token: join(options.filesDir, 'service-token'), ca: join(options.filesDir, 'service-ca.pem') };
    await writeFile(files.token, `${service.token}\n`, { mode: 0o600 });
    await writeFile(files.ca, service.caPem, { mode: 0o644 });
  }
  return { service, hostnameOf, hooks, fingerprintSha256: new X509Certificate(service.caPem).fingerprint256, files };
}

/** A locally administered MAC per device: 02:00:5e:00:HH:LL. */
function macOf(index: number): string {
  const n = index + 1;
  return `02:00:5e:00:${((n >> 8) & 0xff).toString(16).padStart(2, '0')}:${(n & 0xff).toString(16).padStart(2, '0')}`;
}
