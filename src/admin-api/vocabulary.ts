/**
 * The Admin API v1's own words for the interface resource (docs/device-model.md): address families,
 * the six file slots, and the write-only fields the device never returns. One definition shared
 * by the client, the plan and the simulator, so the three cannot drift apart.
 */

export const FAMILIES = ['inet', 'inet6'] as const;
export type Family = (typeof FAMILIES)[number];

export const FILE_SLOTS = [
  'wpa_ca_cert',
  'wpa_client_cert',
  'wpa_private_key',
  'wpa_ca_cert2',
  'wpa_client_cert2',
  'wpa_private_key2',
] as const;
export type FileSlot = (typeof FILE_SLOTS)[number];

export function isFileSlot(value: string): value is FileSlot {
  return (FILE_SLOTS as readonly string[]).includes(value);
}

/** Never returned by the device: a GET shows `<field>_set: true` instead. */
export const WRITE_ONLY_FIELDS = [
  'wpa_password',
  'passphrase',
  'wpa_private_key_passwd',
  'wpa_private_key2_passwd',
] as const;
export type WriteOnlyField = (typeof WRITE_ONLY_FIELDS)[number];

export function isWriteOnlyField(field: string): field is WriteOnlyField {
  return (WRITE_ONLY_FIELDS as readonly string[]).includes(field);
}

/** `wpa_password_set`: how a view says a write-only field holds a value. */
export type SetMarker = `${WriteOnlyField}_set`;

export function setMarker(field: WriteOnlyField): SetMarker {
  return `${field}_set`;
}

/** Fields a view adds that are facts about the stanza, not its configuration. */
const VIEW_ONLY_FIELDS = ['name', 'family', 'config_state', 'in_use', 'dot1x_state'] as const;

export function isViewOnlyField(field: string): boolean {
  return (VIEW_ONLY_FIELDS as readonly string[]).includes(field);
}

/**
 * One stanza's identity, "eth1 inet": the key of the secrets record (state files keep it, so the
 * spelling is stable), of the plan's and the simulator's maps, and of messages.
 */
export function stanzaKey(name: string, family: Family): string {
  return `${name} ${family}`;
}
