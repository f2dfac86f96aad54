import { isIPv6 } from 'node:net';
import type { AuthenticatorProfile } from './authenticator-profile.js';
import type { DeviceConfig } from './device-config.js';
import { interfaceKind } from './device-model.js';
import type { Dot1xBackend } from './dot1x-backend.js';
import { FAMILIES, hasDot1x, stanzaKey, type Family, type Stanza } from './stanza.js';

/**
 * What the network makes of the active configuration after a restart: per interface its 802.1X
 * state and whether it carries traffic, the addresses the interfaces hold, and whether the
 * management interface (the one the client talks through) is still reachable.
 */

const Dot1xState = { Authorized: 'authorized', Unauthorized: 'unauthorized', Disabled: 'disabled' } as const;
type Dot1xState = (typeof Dot1xState)[keyof typeof Dot1xState];

interface InterfaceStatus {
  dot1xState: Dot1xState;
  carriesTraffic: boolean;
  reason: string;
}

interface InUse {
  address: string;
  netmask: string;
  gateway?: string;
}

export interface NetworkStatus {
  interfaces: Map<string, InterfaceStatus>;
  /** By stanza key (`eth0 inet`): the address that stanza really holds now. */
  inUse: Map<string, InUse>;
  /** Why the management interface is unreachable; undefined when it answers. */
  lockout?: string | undefined;
}

export interface NetworkInput {
  config: DeviceConfig;
  /** Switch ports that demand 802.1X, by physical interface. */
  switchPorts: ReadonlyMap<string, AuthenticatorProfile>;
  backend: Dot1xBackend;
  managementInterface: string;
  listenHost: string;
}

export async function evaluateNetwork(input: NetworkInput): Promise<NetworkStatus> {
  const { config } = input;
  const interfaces = new Map<string, InterfaceStatus>();
  const files = {
    get: (slot: Parameters<DeviceConfig['activeFile']>[0], name: string) => config.activeFile(slot, name)?.content,
  };
  const representative = (name: string): Stanza | undefined =>
    config.activeStanza(name, 'inet') ?? config.activeStanza(name, 'inet6');

  // Physical ports first: a VLAN's traffic goes through its parent's port.
  const portStatus = new Map<string, InterfaceStatus>();
  for (const port of Object.keys(config.model.interfaces)) {
    const stanza = representative(port);
    const profile = input.switchPorts.get(port);
    let status: InterfaceStatus;
    if (profile === undefined) {
      status =
        stanza !== undefined && hasDot1x(stanza)
          ? {
              dot1xState: Dot1xState.Authorized,
              carriesTraffic: true,
              reason: 'the switch port does not demand 802.1X',
            }
          : { dot1xState: Dot1xState.Disabled, carriesTraffic: true, reason: 'the switch port does not demand 802.1X' };
    } else if (stanza === undefined) {
      status = {
        dot1xState: Dot1xState.Unauthorized,
        carriesTraffic: false,
        reason: 'the interface is not configured; its switch port demands 802.1X',
      };
    } else if (!hasDot1x(stanza)) {
      status = {
        dot1xState: Dot1xState.Unauthorized,
        carriesTraffic: false,
        reason: '802.1X is disabled on the interface, but its switch port demands it',
      };
    } else {
      const result = await input.backend.authenticate(profile, stanza, files);
      status = {
        dot1xState: result.authorized ? Dot1xState.Authorized : Dot1xState.Unauthorized,
        carriesTraffic: result.authorized,
        reason: result.reason,
      };
    }
    portStatus.set(port, status);
    if (stanza !== undefined) interfaces.set(port, status);
  }

  for (const name of config.interfaceNames('active')) {
    if (interfaces.has(name)) continue;
    const kind = interfaceKind(config.model, name);
    const stanza = representative(name);
    const parent = kind?.kind === 'vlan' ? portStatus.get(kind.parent) : undefined;
    const carriesTraffic = parent?.carriesTraffic ?? true;
    const withDot1x = stanza !== undefined && hasDot1x(stanza);
    interfaces.set(name, {
      dot1xState: !withDot1x ? Dot1xState.Disabled : carriesTraffic ? Dot1xState.Authorized : Dot1xState.Unauthorized,
      carriesTraffic,
      reason:
        parent === undefined
          ? 'no switch port of its own'
          : `traffic goes through ${kind?.kind === 'vlan' ? kind.parent : ''}: ${parent.reason}`,
    });
  }

  const inUse = addressesInUse(input, interfaces);
  return { interfaces, inUse, lockout: lockoutReason(input, interfaces) };
}

const LEASE = {
  inet: (n: number): InUse => ({ address: `198.51.100.${10 + n}`, netmask: '255.255.255.0', gateway: '198.51.100.1' }),
  inet6: (n: number): InUse => ({
    address: `2001:db8:100::${(0x10 + n).toString(16)}`,
    netmask: '64',
    gateway: '2001:db8:100::1',
  }),
} as const;

function addressesInUse(input: NetworkInput, interfaces: Map<string, InterfaceStatus>): Map<string, InUse> {
  const { config } = input;
  const inUse = new Map<string, InUse>();
  const listenFamily: Family = isIPv6(input.listenHost) ? 'inet6' : 'inet';
  config.interfaceNames('active').forEach((name, index) => {
    const carries = interfaces.get(name)?.carriesTraffic ?? true;
    for (const family of FAMILIES) {
      const stanza = config.activeStanza(name, family);
      if (stanza === undefined) continue;
      const held = addressHeld(stanza, family, index, carries);
      if (held !== undefined) inUse.set(stanzaKey(name, family), held);
    }
  });
  // The client reaches the simulator on its listening address: report it on the management
  // interface, so a client finds "the interface it talks through" by matching its URL's host.
  const mgmt = input.managementInterface;
  const family =
    config.activeStanza(mgmt, listenFamily) !== undefined
      ? listenFamily
      : FAMILIES.find((f) => config.activeStanza(mgmt, f) !== undefined);
  if (family !== undefined) {
    inUse.set(stanzaKey(mgmt, family), {
      address: input.listenHost,
      netmask: listenFamily === 'inet' ? '255.0.0.0' : '128',
    });
  }
  return inUse;
}

function addressHeld(stanza: Stanza, family: Family, index: number, carriesTraffic: boolean): InUse | undefined {
  switch (stanza.method) {
    case 'static':
      // A static address sits on the interface whether or not the port lets traffic through.
      return stanza.address !== undefined && stanza.netmask !== undefined
        ? {
            address: stanza.address,
            netmask: stanza.netmask,
            ...(stanza.gateway !== undefined ? { gateway: stanza.gateway } : {}),
          }
        : undefined;
    case 'dhcp':
    case 'auto':
      // No traffic, no DHCP lease and no router advertisement.
      return carriesTraffic ? LEASE[family](index) : undefined;
    default:
      return undefined;
  }
}

function lockoutReason(input: NetworkInput, interfaces: Map<string, InterfaceStatus>): string | undefined {
  const mgmt = input.managementInterface;
  const addressed = FAMILIES.some((f) => {
    const method = input.config.activeStanza(mgmt, f)?.method;
    return method === 'dhcp' || method === 'static' || method === 'auto';
  });
  if (!addressed) return `management interface ${mgmt} has no active stanza with an address`;
  const status = interfaces.get(mgmt);
  if (status !== undefined && !status.carriesTraffic)
    return `management interface ${mgmt} carries no traffic: ${status.reason}`;
  return undefined;
}
