import { z } from 'zod';
import { expect, integer, list, nonEmpty, oneOf, parseWith, text, type ParseResult } from './field-sentences.js';

/**
 * Shape and type checks of a flat POST /interface/ body (messages: see field-sentences.ts). Rules
 * that need the device (interfaces, files, other stanzas) live in stanza-rules.ts.
 */

const RouteBody = z.strictObject({
  destination: text('a CIDR string'),
  gateway: text('an IP address string'),
  metric: integer(0, 2 ** 31 - 1, 'a non-negative integer').optional(),
});

const StanzaBody = z.strictObject({
  name: nonEmpty('an interface name'),
  family: oneOf(['inet', 'inet6']),
  method: oneOf(['dhcp', 'static', 'auto', 'manual']),
  address: text().optional(),
  netmask: text().optional(),
  gateway: text().optional(),
  dns_nameservers: list(text('a string'), 'a list of IP addresses').optional(),
  dns_search: list(text('a string'), 'a list of domain names').optional(),
  routes: list(RouteBody, 'a list of routes').optional(),
  mtu: integer(576, 9000, 'an integer from 576 to 9000').optional(),
  link_speed: integer(1, 1_000_000, 'a speed in Mb/s (a positive integer)').optional(),
  link_duplex: oneOf(['half', 'full']).optional(),
  link_autoneg: z.boolean(expect('true or false')).optional(),
  vlan_raw_device: nonEmpty('an interface name').optional(),
  ssid: text().optional(),
  security: oneOf(['open', 'wpa2_personal', 'wpa2_enterprise']).optional(),
  passphrase: text().optional(),
  wpa_key_mgmt: oneOf(['IEEE8021X', 'WPA-EAP']).optional(),
  wpa_eap: oneOf(['PEAP', 'TLS', 'MD5']).optional(),
  wpa_identity: nonEmpty().optional(),
  wpa_anonymous_identity: nonEmpty().optional(),
  wpa_password: nonEmpty().optional(),
  wpa_phase1: oneOf(['peapver=0', 'peapver=1']).optional(),
  wpa_phase2: oneOf(['auth=MSCHAPV2', 'auth=TLS']).optional(),
  wpa_ca_cert: nonEmpty('a file name').optional(),
  wpa_client_cert: nonEmpty('a file name').optional(),
  wpa_private_key: nonEmpty('a file name').optional(),
  wpa_private_key_passwd: nonEmpty().optional(),
  wpa_ca_cert2: nonEmpty('a file name').optional(),
  wpa_client_cert2: nonEmpty('a file name').optional(),
  wpa_private_key2: nonEmpty('a file name').optional(),
  wpa_private_key2_passwd: nonEmpty().optional(),
});

export type Stanza = z.infer<typeof StanzaBody>;

export function parseStanzaBody(body: unknown): ParseResult<Stanza> {
  return parseWith(StanzaBody, body);
}
