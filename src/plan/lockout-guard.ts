import { hostAddress } from '../core/host-address.js';
import type { DeviceInterface, Stanza } from '../admin-api/index.js';
import type { FieldChange, PlanRefusal, StanzaChange } from './plan-types.js';

/**
 * The interface the agent reaches the device through: the one whose active address is one of the
 * URL host's addresses (`hostAddresses`: what the name resolved to, `localhost` included; the URL's
 * literal host when not given), else the one holding the default route. Breaking it (802.1X,
 * addressing, VLAN, removal) can leave the device unreachable until someone drives out. Both
 * sides compare as core/host-address.ts writes them, so `[::ffff:127.0.0.1]` matches 127.0.0.1.
 * Undefined: it cannot be told (no address matches, no gateway anywhere); the plan then refuses
 * every such change without allow_disconnect rather than guess.
 */
export function managementInterface(
  active: readonly DeviceInterface[],
  deviceUrl: string,
  hostAddresses?: readonly string[],
): string | undefined {
  const literal = new URL(deviceUrl).hostname.replace(/^\[|\]$/g, '');
  const hosts = new Set(
    (hostAddresses !== undefined && hostAddresses.length > 0 ? hostAddresses : [literal]).map(hostAddress),
  );
  const stanzas = active.flatMap((iface) =>
    Object.values(iface.families)
      .filter((s): s is Stanza => s != null)
      .map((stanza) => ({ name: iface.name, stanza })),
  );
  const byAddress = stanzas.find(({ stanza }) => {
    const address = stanza.in_use?.address ?? stanza.address;
    return address !== undefined && hosts.has(hostAddress(address));
  });
  if (byAddress !== undefined) return byAddress.name;
  // An empty in_use gateway means none (a DHCP lease without a router).
  const byRoute = stanzas.find(({ stanza }) => (stanza.in_use?.gateway ?? '') !== '' || stanza.gateway !== undefined);
  return byRoute?.name;
}

/**
 * The physical port under a VLAN management interface (its `vlan_raw_device`), else undefined.
 * 802.1X is a port's: the VLAN's traffic stops when its port is refused, so that port's 802.1X is
 * the VLAN's too (admin-api-model.md, "Connectivity and 802.1X on the wire").
 */
export function managementPort(active: readonly DeviceInterface[], mgmt: string | undefined): string | undefined {
  const iface = active.find((i) => i.name === mgmt);
  const parents = Object.values(iface?.families ?? {}).map((s) => s?.vlan_raw_device);
  return parents.find((p): p is string => typeof p === 'string' && p !== '' && p !== mgmt);
}

const ADDRESSING_FIELDS = new Set(['method', 'address', 'netmask', 'gateway', 'vlan_raw_device']);

/** Which kinds of change to a stanza of the management interface cut the agent off. */
function dangerousChanges(changes: readonly FieldChange[], removed: boolean): string[] {
  if (removed) return ['removal'];
  const kinds = new Set<string>();
  for (const change of changes) {
    if (change.field.startsWith('wpa_')) kinds.add('802.1X');
    else if (change.field === 'vlan_raw_device') kinds.add('VLAN');
    else if (ADDRESSING_FIELDS.has(change.field)) kinds.add('addressing');
    else if (change.field === 'ssid' || change.field === 'security' || change.field === 'passphrase')
      kinds.add('wireless');
  }
  return [...kinds];
}

const ON_SITE =
  'if the switch port or network does not accept the new settings the device drops off the network until someone fixes it on site ' +
  '(set allow_disconnect: true in the file, or pass --allow-disconnect, if that is intended)';

/**
 * The lockout guard: a change that can cut the agent off the management interface needs
 * allow_disconnect. When the interface cannot be told (`mgmt` undefined), every existing
 * interface might be it, so a dangerous change to any of them is refused, saying why.
 */
export function lockoutRefusal(
  stanzas: readonly StanzaChange[],
  mgmt: string | undefined,
  /** The port under a VLAN management interface (managementPort): its 802.1X is guarded too. */
  port?: string,
): PlanRefusal | undefined {
  const risky = stanzas.filter(
    (s) => (mgmt === undefined || s.name === mgmt) && s.action !== 'unchanged' && s.action !== 'create',
  );
  const kinds = [...new Set(risky.flatMap((s) => dangerousChanges(s.changes, s.action === 'delete')))];
  // Any 802.1X change of the port counts, its first (create) and its removal (delete) included.
  const portChanged = stanzas.some(
    (s) => port !== undefined && s.name === port && s.changes.some((c) => c.field.startsWith('wpa_')),
  );
  if (mgmt !== undefined && portChanged) {
    const clauses =
      kinds.length === 0 ? [] : [`${whatChanges(kinds, mgmt)}, the interface mpprov reaches the device through`];
    clauses.push(
      `this changes the 802.1X of ${port}, the port that carries ${mgmt}, the interface mpprov reaches the device through`,
    );
    return { reason: 'lockout', message: `${clauses.join('; ')}; ${ON_SITE}` };
  }
  if (kinds.length === 0) return undefined;
  if (mgmt === undefined) {
    const names = [
      ...new Set(risky.filter((s) => dangerousChanges(s.changes, s.action === 'delete').length > 0).map((s) => s.name)),
    ].sort();
    return {
      reason: 'lockout',
      message:
        `${whatChanges(kinds, names.join(', '))}, and mpprov cannot tell which interface it reaches the device through ` +
        '(no interface has the address the URL names and none has a gateway), so it may be that one; ' +
        ON_SITE,
    };
  }
  return {
    reason: 'lockout',
    message: `${whatChanges(kinds, mgmt)}, the interface mpprov reaches the device through; ${ON_SITE}`,
  };
}

/** `this removes eth0`, `this changes the 802.1X and addressing of eth0`. */
function whatChanges(kinds: readonly string[], names: string): string {
  return kinds.includes('removal') ? `this removes ${names}` : `this changes the ${kinds.join(' and ')} of ${names}`;
}
