import { z } from 'zod';
import type { Secret } from '../core/secret.js';

/**
 * One address-family stanza as the device shows it (docs/device-model.md, "Interfaces and stanzas").
 * Known fields are typed by their JSON type only, not narrowed to today's values, and unknown
 * fields are kept: a real device may add fields or values, and the plan compares what it finds.
 */

import type { Family, SetMarker, WriteOnlyField } from './vocabulary.js';

const Route = z.looseObject({
  destination: z.string(),
  gateway: z.string(),
  metric: z.number().optional(),
});

const InUse = z.looseObject({
  address: z.string().optional(),
  netmask: z.string().optional(),
  gateway: z.string().optional(),
});

const text = z.string().optional();
const flag = z.boolean().optional();

/** The settings of a stanza, readable back from the device: what a plan posts and compares in the clear. */
const settingsShape = {
  method: text,
  address: text,
  netmask: text,
  gateway: text,
  dns_nameservers: z.array(z.string()).optional(),
  dns_search: z.array(z.string()).optional(),
  routes: z.array(Route).optional(),
  mtu: z.number().optional(),
  link_speed: z.number().optional(),
  link_duplex: text,
  link_autoneg: flag,
  vlan_raw_device: text,
  ssid: text,
  security: text,
  wpa_key_mgmt: text,
  wpa_eap: text,
  wpa_identity: text,
  wpa_anonymous_identity: text,
  wpa_phase1: text,
  wpa_phase2: text,
  wpa_ca_cert: text,
  wpa_client_cert: text,
  wpa_private_key: text,
  wpa_ca_cert2: text,
  wpa_client_cert2: text,
  wpa_private_key2: text,
};

// `satisfies` ties these two shapes to WRITE_ONLY_FIELDS: a field added there and not here fails to compile.
const writeOnlyShape = {
  passphrase: text,
  wpa_password: text,
  wpa_private_key_passwd: text,
  wpa_private_key2_passwd: text,
} satisfies Record<WriteOnlyField, typeof text>;

/** What a GET shows instead of a write-only value. */
const setMarkerShape = {
  passphrase_set: flag,
  wpa_password_set: flag,
  wpa_private_key_passwd_set: flag,
  wpa_private_key2_passwd_set: flag,
} satisfies Record<SetMarker, typeof flag>;

/**
 * A stanza's settings and nothing else: no write-only values, no `_set` markers, no view-only
 * fields, no unknown fields. The plan's desired stanzas are made of these, so a misspelt field
 * name in the plan does not compile.
 */
export const StanzaSettings = z.strictObject(settingsShape);
export type StanzaSettings = z.infer<typeof StanzaSettings>;

export const Stanza = z.looseObject({
  ...settingsShape,
  ...writeOnlyShape,
  ...setMarkerShape,
  /** Active view only: the address the interface really holds now. */
  in_use: InUse.optional(),
});
export type Stanza = z.infer<typeof Stanza>;

/**
 * What the client sends: the flat fields of a stanza. Write-only values may stay `Secret`s until
 * the body is serialised (json-body.ts reveals them there and nowhere else), so a stanza can be
 * logged or kept in a plan without leaking a password.
 */
type StanzaFields = { [K in keyof Stanza]: K extends WriteOnlyField ? string | Secret | undefined : Stanza[K] };

/** POST /interface/ body: one family stanza of one interface. */
export type PostedStanza = StanzaFields & { name: string; family: Family };

/** PUT /interface/{name}/ body: the fields to change, with `family`; `null` removes a field. */
export type StanzaUpdate = { [K in keyof StanzaFields]?: StanzaFields[K] | null } & { family: Family };
