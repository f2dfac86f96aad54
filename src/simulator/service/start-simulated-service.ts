import { X509Certificate } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DeviceEventHooks } from '../simulated-device.js';
import { startServiceSimulator, type ServiceSimulator } from './service-simulator.js';
import { makeFolder } from '../../core/make-folder.js';

/**
 * `mpprov simulate --service`: the simulated monitoring service beside the simulated MPs, each
 * MP registered under a hostname and its connectionStatus following its device's outages
 * through the device's event hooks (restart began, answering again, management 802.1X failed).
 * With several organizations the MPs are spread over them round-robin (MP n in organization
 * n mod K), so confirmation rounds per organization can be measured.
 */

export interface SimulatedServiceSetup {
  service: ServiceSimulator;
  /** Hostname of the device with this index. */
  hostnameOf(index: number): string;
  /** The organization (id) the device with this index is registered in. */
  orgIdOf(index: number): number;
  hooks: DeviceEventHooks;
  /** The token is an Organization Admin's. */
  orgAdmin: boolean;
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
  /** Organizations to spread the MPs over; default 1 (`Branch Networks`, id 12). */
  organizations?: number | undefined;
  /** Delay to a path's first data; default the simulator's (3000 ms). */
  pathDataMs?: number | undefined;
  /** Answer in the earlier model's shapes instead of the vendor's. */
  legacyShapes?: boolean | undefined;
  host?: string | undefined;
  port?: number | undefined;
  /** Write `service-token` and `service-ca.pem` here (owner-only). */
  filesDir?: string | undefined;
  /** The token is an Organization Admin's (may list every user's observers). */
  orgAdmin?: boolean | undefined;
  /** A CA HTTPS event receivers' certificates may come from (beside Node's default store). */
  eventsCaPem?: string | undefined;
}): Promise<SimulatedServiceSetup> {
  const organizations = Array.from({ length: Math.max(1, options.organizations ?? 1) }, (_, i) => ({
    id: FIRST_ORG_ID + i,
    name: i === 0 ? 'Branch Networks' : `Branch Networks ${i + 1}`,
  }));
  const service = await startServiceSimulator({
    reconnectMs: options.reconnectMs,
    organizations,
    ...(options.pathDataMs === undefined ? {} : { pathDataMs: options.pathDataMs }),
    ...(options.legacyShapes === true ? { shapes: 'legacy' as const } : {}),
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.eventsCaPem === undefined ? {} : { eventsCaPem: options.eventsCaPem }),
    tokens: [{ label: 'simulate', orgAdmin: options.orgAdmin === true }],
  });
  const hostnameOf = (index: number): string =>
    options.devices === 1 ? options.hostname : `${options.hostname}-${index + 1}`;
  const orgIdOf = (index: number): number => FIRST_ORG_ID + (index % organizations.length);
  for (let index = 0; index < options.devices; index++) {
    service.registerAppliance({
      hostname: hostnameOf(index),
      orgId: orgIdOf(index),
      macAddress: macOf(index),
      // Every simulated device listens on the same loopback address (on its own port).
      resolvedIp: options.host ?? '127.0.0.1',
      connectionStatus: 'AVAILABLE',
    });
  }
  const hooks: DeviceEventHooks = {
    restartStarted: (index) => service.restartStarted(hostnameOf(index)),
    answeringAgain: (index) => service.answeringAgain(hostnameOf(index)),
    managementDot1xFailed: (index) => service.managementDot1xFailed(hostnameOf(index)),
  };
  let files: SimulatedServiceSetup['files'];
  if (options.filesDir !== undefined) {
    await makeFolder(options.filesDir, 0o700);
    files = { token: join(options.filesDir, 'service-token'), ca: join(options.filesDir, 'service-ca.pem') };
    await writeFile(files.token, `${service.token}\n`, { mode: 0o600 });
    await writeFile(files.ca, service.caPem, { mode: 0o644 });
  }
  return {
    service,
    hostnameOf,
    orgIdOf,
    hooks,
    orgAdmin: options.orgAdmin === true,
    fingerprintSha256: new X509Certificate(service.caPem).fingerprint256,
    files,
  };
}

const FIRST_ORG_ID = 12;

/** A locally administered MAC per device: 02:00:5e:00:HH:LL. */
function macOf(index: number): string {
  const n = index + 1;
  return `02:00:5e:00:${((n >> 8) & 0xff).toString(16).padStart(2, '0')}:${(n & 0xff).toString(16).padStart(2, '0')}`;
}
