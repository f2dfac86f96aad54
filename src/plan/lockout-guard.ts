import { canonicalIp } from '../config/index.js';
import type { FieldChange } from './compare-stanzas.js';
import type { DeviceInterfaceView, DeviceStanza } from './stanza.js';

/**
 * The interface the agent reaches the device through: the one whose active address is the URL's
 * host, else the one holding the default route. Breaking it (802.1X, addressing, VLAN, removal)
 * can leave the device unreachable until someone drives out.
 */
export function managementInterface(active: readonly DeviceInterfaceView[], deviceUrl: string): string | undefined {
  const host = canonicalIp(new URL(deviceUrl).hostname.replace(/^\[|\]$/g, ''));
  const stanzas = active.flatMap((iface) =>
    Object.values(iface.families)
      .filter((s): s is DeviceStanza => s != null)
      .map((stanza) => ({ name: iface.name, stanza })),
  );
  const byAddress = stanzas.find(({ stanza }) => {
    const inUse = inUseOf(stanza);
    const address = inUse?.address ?? (typeof stanza.address === 'string' ? stanza.address : undefined);
    return address !== undefined && canonicalIp(address) === host;
  });
  if (byAddress !== undefined) return byAddress.name;
  const byRoute = stanzas.find(({ stanza }) => inUseOf(stanza)?.gateway !== undefined || typeof stanza.gateway === 'string');
  return byRoute?.name;
}

function inUseOf(stanza: DeviceStanza): { address?: string; gateway?: string } | undefined {
  const inUse = stanza.in_use;
  if (inUse === null || typeof inUse !== 'object') return undefined;
  const { address, gateway } = inUse as Record<string, unknown>;
  return {
    ...(typeof address === 'string' ? { address } : {}),
    ...(typeof gateway === 'string' && gateway !== '' ? { gateway } : {}),
  };
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
