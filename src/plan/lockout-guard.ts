import { canonicalIp } from '../config/index.js';
import type { DeviceInterface, Stanza } from '../admin-api/index.js';
import type { FieldChange } from './plan-types.js';

/**
 * The interface the agent reaches the device through: the one whose active address is the URL's
 * host, else the one holding the default route. Breaking it (802.1X, addressing, VLAN, removal)
 * can leave the device unreachable until someone drives out.
 */
export function managementInterface(active: readonly DeviceInterface[], deviceUrl: string): string | undefined {
  const host = canonicalIp(new URL(deviceUrl).hostname.replace(/^\[|\]$/g, ''));
  const stanzas = active.flatMap((iface) =>
    Object.values(iface.families)
      .filter((s): s is Stanza => s != null)
      .map((stanza) => ({ name: iface.name, stanza })),
  );
  const byAddress = stanzas.find(({ stanza }) => {
    const address = stanza.in_use?.address ?? stanza.address;
    return address !== undefined && canonicalIp(address) === host;
  });
  if (byAddress !== undefined) return byAddress.name;
  // An empty in_use gateway means none (a DHCP lease without a router).
  const byRoute = stanzas.find(({ stanza }) => (stanza.in_use?.gateway ?? '') !== '' || stanza.gateway !== undefined);
  return byRoute?.name;
}

const ADDRESSING_FIELDS = new Set(['method', 'address', 'netmask', 'gateway', 'vlan_raw_device']);

/** Which kinds of change to a stanza of the management interface cut the agent off. */
export function dangerousChanges(changes: readonly FieldChange[], removed: boolean): string[] {
  if (removed) return ['removal'];
  const kinds = new Set<string>();
  for (const change of changes) {
    if (change.field.startsWith('wpa_')) kinds.add('802.1X');
    else if (change.field === 'vlan_raw_device') kinds.add('VLAN');
    else if (ADDRESSING_FIELDS.has(change.field)) kinds.add('addressing');
    else if (change.field === 'ssid' || change.field === 'security' || change.field === 'passphrase') kinds.add('wireless');
  }
  return [...kinds];
}
