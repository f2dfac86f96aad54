import type { Family as AdminFamily } from '../admin-api/vocabulary.js';
import type { Secret } from '../config/index.js';

/**
 * The Admin API's unit of configuration: one address-family stanza of one interface, in the
 * device's flat field names (admin-api-model.md). The plan speaks only this language.
 */

export const Family = { Inet: 'inet', Inet6: 'inet6' } as const;
export type Family = AdminFamily;

export interface RouteField {
  destination: string;
  gateway: string;
  metric?: number;
}

export type FieldValue = string | number | boolean | string[] | RouteField[];
export type StanzaFields = Record<string, FieldValue>;

/** Write-only fields: never returned by the device, never logged by us. */
export { WRITE_ONLY_FIELDS as SECRET_FIELDS, type WriteOnlyField as SecretField, FILE_SLOTS, type FileSlot } from '../admin-api/vocabulary.js';
import type { FileSlot, WriteOnlyField as SecretField } from '../admin-api/vocabulary.js';

/** Fields the device adds to its views that are not configuration. */
export const VIEW_ONLY_FIELDS = new Set(['name', 'family', 'config_state', 'in_use', 'dot1x_state']);

export interface DesiredStanza {
  name: string;
  family: Family;
  /** Every non-secret field, as it will be posted. */
  fields: StanzaFields;
  /** Secret fields, posted with the stanza, never shown. */
  secrets: Partial<Record<SecretField, Secret>>;
}

export interface DesiredFile {
  slot: FileSlot;
  /** Content-derived name, so an unchanged file is never uploaded again. */
  filename: string;
  bytes: Buffer;
  /** Where the stick named it, for messages. */
  source: string;
}

// A type alias, not an interface, so it fits the client's wire type with its index signature.
export type DesiredAclRule = {
  action: 'permit';
  protocol: 'tcp' | 'udp';
  from_port: number;
  to_port: number;
  source_addresses: string[];
  interfaces: string[];
};

export interface DesiredInterface {
  name: string;
  /** The parent of a VLAN. */
  vlanParent?: string;
  wireless: boolean;
  stanzas: DesiredStanza[];
}

export interface DesiredDevice {
  name: string;
  url: string;
  interfaces: DesiredInterface[];
  files: DesiredFile[];
  /** Undefined when the file has no `acl` key: the device's rules are then left alone. */
  acl: DesiredAclRule[] | undefined;
  prune: boolean;
  allowDisconnect: boolean;
}

/** What the device reports for one stanza: plain fields plus `<secret>_set`, `in_use`, `dot1x_state`. */
export type DeviceStanza = Record<string, unknown>;

export interface DeviceInterfaceView {
  name: string;
  families: Partial<Record<Family, DeviceStanza | null>>;
  /** Interface-level facts the device reports beside the stanzas, e.g. `dot1x_state`. */
  extra?: Record<string, unknown>;
}

export { stanzaKey } from '../admin-api/vocabulary.js';
