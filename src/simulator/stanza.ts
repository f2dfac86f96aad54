import type { Stanza } from './stanza-schema.js';

/**
 * Vocabulary of the interface resource (docs/device-model.md, "Interfaces and stanzas"): address
 * families, file slots, which fields are write-only and which describe the interface rather than
 * one address family.
 */

export {
  FAMILIES,
  FILE_SLOTS,
  isFileSlot,
  isWriteOnlyField,
  type Family,
  type FileSlot,
} from '../admin-api/vocabulary.js';
import type { FileSlot } from '../admin-api/vocabulary.js';

/** Slots that must hold a certificate; the others hold a private key. */
export const CERTIFICATE_SLOTS: readonly FileSlot[] = [
  'wpa_ca_cert',
  'wpa_client_cert',
  'wpa_ca_cert2',
  'wpa_client_cert2',
];

/** One flat stanza as POST /interface/ takes it; the type comes from its zod schema. */
export type { Stanza } from './stanza-schema.js';

export type StanzaField = keyof Stanza;

/** Every `wpa_*` field, in the order the model lists them (error messages name the first). */
export const WPA_FIELDS = [
  'wpa_key_mgmt',
  'wpa_eap',
  'wpa_identity',
  'wpa_anonymous_identity',
  'wpa_password',
  'wpa_phase1',
  'wpa_phase2',
  'wpa_ca_cert',
  'wpa_client_cert',
  'wpa_private_key',
  'wpa_private_key_passwd',
  'wpa_ca_cert2',
  'wpa_client_cert2',
  'wpa_private_key2',
  'wpa_private_key2_passwd',
] as const satisfies readonly StanzaField[];

/**
 * Fields that describe the interface, not the address family. The stanza posted last sets them
 * for the interface: the device copies them into the other family's pending stanza
 * (interface-level-copy.ts), so the two stanzas of a view always agree.
 */
export const INTERFACE_LEVEL_FIELDS = [
  'mtu',
  'link_speed',
  'link_duplex',
  'link_autoneg',
  'ssid',
  'security',
  'passphrase',
  ...WPA_FIELDS,
] as const satisfies readonly StanzaField[];

export { stanzaKey } from '../admin-api/vocabulary.js';

export function hasDot1x(stanza: Stanza): boolean {
  return stanza.wpa_key_mgmt !== undefined;
}
