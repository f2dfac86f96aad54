import { createHash } from 'node:crypto';
import type { AclRule } from './access-control-list.js';
import { renderInterfaces } from './interface-view.js';
import type { RequestLogEntry } from './request-log.js';
import type { AccessControlList } from './access-control-list.js';
import type { DeviceConfig } from './device-config.js';
import type { FaultSet } from './faults.js';
import type { NetworkStatus } from './network-status.js';
import type { RequestLog } from './request-log.js';
import type { AuthenticatorProfile } from './authenticator-profile.js';

/**
 * Everything the simulator knows about one device, for tests and the control port. Secrets are
 * redacted exactly as the Admin API redacts them; files appear by name, kind and digest.
 */
export interface SimulatorState {
  index: number;
  url: string;
  phase: string;
  model: string;
  management_interface: string;
  lockout_reason?: string;
  listen_error?: string;
  fingerprint_sha256: string;
  restarts: number;
  reboots: number;
  interfaces: { active: Record<string, unknown>[]; pending: Record<string, unknown>[] };
  dot1x: Record<string, { state: string; carries_traffic: boolean; reason: string }>;
  switch_ports: Record<string, { eap_methods: string[]; profile?: string }>;
  files: { slot: string; name: string; state: string; kind: string; size: number; sha256: string }[];
  acl: AclRule[];
  faults: string[];
  requests: RequestLogEntry[];
}

/**
 * What a snapshot reads of a device. Structural, so this module does not import the device's
 * class (which imports this module to serve the control port).
 */
export interface StateSource {
  readonly url: string;
  readonly phase: string;
  readonly config: DeviceConfig;
  readonly settings: {
    index: number;
    managementInterface: string;
    switchPorts: ReadonlyMap<string, AuthenticatorProfile>;
  };
  readonly listenError: string | undefined;
  readonly tls: { fingerprintSha256: string };
  readonly restarts: number;
  readonly reboots: number;
  readonly acl: AccessControlList;
  readonly faults: FaultSet;
  readonly log: RequestLog;
  network(): NetworkStatus;
}

const CONTROL_VIEW = { showDot1xState: true } as const;

export function snapshotState(device: StateSource): SimulatorState {
  const network = device.network();
  const dot1x: SimulatorState['dot1x'] = {};
  for (const [name, status] of network.interfaces) {
    dot1x[name] = { state: status.dot1xState, carries_traffic: status.carriesTraffic, reason: status.reason };
  }
  const switchPorts: SimulatorState['switch_ports'] = {};
  for (const [port, profile] of device.settings.switchPorts) {
    switchPorts[port] = {
      eap_methods: [...profile.eapMethods],
      ...(profile.file !== undefined ? { profile: profile.file } : {}),
    };
  }
  return {
    index: device.settings.index,
    url: device.url,
    phase: device.phase,
    model: device.config.model.model,
    management_interface: device.settings.managementInterface,
    ...(network.lockout !== undefined && device.phase === 'locked-out' ? { lockout_reason: network.lockout } : {}),
    ...(device.listenError !== undefined ? { listen_error: device.listenError } : {}),
    fingerprint_sha256: device.tls.fingerprintSha256,
    restarts: device.restarts,
    reboots: device.reboots,
    // The control port is test-only, not the Admin API: it always shows the 802.1X state.
    interfaces: {
      active: renderInterfaces(device.config, network, 'active', CONTROL_VIEW),
      pending: renderInterfaces(device.config, network, 'pending', CONTROL_VIEW),
    },
    dot1x,
    switch_ports: switchPorts,
    files: device.config.fileListing().map((f) => ({
      slot: f.slot,
      name: f.name,
      state: f.state,
      kind: f.kind,
      size: f.content.length,
      sha256: createHash('sha256').update(f.content).digest('hex'),
    })),
    acl: device.acl.list(),
    faults: device.faults.list(),
    requests: device.log.list(),
  };
}
