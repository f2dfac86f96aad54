import { beforeEach, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { useLabPki } from '../support/lab-pki.js';
import { apiClient, restartNetworking, useSimulatorApi, interfaceOf } from './sim-client.js';

/**
 * Every rule of docs/device-model.md "POST /interface/" broken once, asserting the exact 400
 * sentence (which names the field). Each base body is first shown to be accepted, so a refusal
 * is caused by the one change the case makes.
 */

type Body = Record<string, unknown>;
const without = (body: Body, ...fields: string[]): Body =>
  Object.fromEntries(Object.entries(body).filter(([k]) => !fields.includes(k)));

const DOT1X = { name: 'eth1', family: 'inet', method: 'dhcp', wpa_key_mgmt: 'IEEE8021X' } as const;
const TLS: Body = {
  ...DOT1X,
  wpa_eap: 'TLS',
  wpa_identity: 'client.lab.test',
  wpa_ca_cert: 'ca.pem',
  wpa_client_cert: 'client.pem',
  wpa_private_key: 'client.key',
};
const PEAP: Body = {
  ...DOT1X,
  wpa_eap: 'PEAP',
  wpa_identity: 'alice',
  wpa_anonymous_identity: 'anonymous',
  wpa_password: 'alicepass',
  wpa_phase1: 'peapver=0',
  wpa_phase2: 'auth=MSCHAPV2',
  wpa_ca_cert: 'ca.pem',
};
const PEAP_TLS: Body = {
  ...DOT1X,
  wpa_eap: 'PEAP',
  wpa_identity: 'client.lab.test',
  wpa_phase2: 'auth=TLS',
  wpa_ca_cert: 'ca.pem',
  wpa_ca_cert2: 'ca.pem',
  wpa_client_cert2: 'client.pem',
  wpa_private_key2: 'client.key',
};
const MD5: Body = { ...DOT1X, wpa_eap: 'MD5', wpa_identity: 'md5user', wpa_password: 'md5secret' };
const STATIC: Body = {
  name: 'eth1',
  family: 'inet',
  method: 'static',
  address: '192.0.2.10',
  netmask: '255.255.255.0',
  gateway: '192.0.2.1',
};
const STATIC6: Body = {
  name: 'eth1',
  family: 'inet6',
  method: 'static',
  address: '2001:db8::10',
  netmask: '64',
  gateway: '2001:db8::1',
};
const WLAN: Body = {
  name: 'wlan0',
  family: 'inet',
  method: 'dhcp',
  ssid: 'lab',
  security: 'wpa2_personal',
  passphrase: 'correct horse',
};
const WLAN_ENTERPRISE: Body = {
  name: 'wlan0',
  family: 'inet',
  method: 'dhcp',
  ssid: 'corp',
  security: 'wpa2_enterprise',
  wpa_key_mgmt: 'WPA-EAP',
  wpa_eap: 'PEAP',
  wpa_identity: 'alice',
  wpa_password: 'alicepass',
  wpa_phase2: 'auth=MSCHAPV2',
};
const VLAN: Body = { name: 'eth1.100', family: 'inet', method: 'dhcp', vlan_raw_device: 'eth1' };

const pki = useLabPki();
const { sim, api } = useSimulatorApi({ serviceRateLimit: false, restartMs: 100 });

beforeEach(async () => {
  const answer = await api.upload({
    wpa_ca_cert: { name: 'ca.pem', content: pki.read('ca.pem') },
    wpa_client_cert: { name: 'client.pem', content: pki.read('client.pem') },
    wpa_private_key: { name: 'client.key', content: pki.read('client.key') },
    wpa_ca_cert2: { name: 'ca.pem', content: pki.read('ca.pem') },
    wpa_client_cert2: { name: 'client.pem', content: pki.read('client.pem') },
    wpa_private_key2: { name: 'client.pfx', content: pki.read('client.pfx') },
  });
  expect(answer.status).toBe(200);
  await api.upload({ wpa_private_key2: { name: 'client.key', content: pki.read('client.key') } });
  await api.upload({ wpa_private_key: { name: 'client.pfx', content: pki.read('client.pfx') } });
});

async function refused(body: unknown, sentence: string): Promise<void> {
  const answer = await api.post('/interface/', body);
  expect(answer.body).toEqual({ success: false, error: sentence });
  expect(answer.status).toBe(400);
}

async function accepted(body: unknown): Promise<void> {
  const answer = await api.post('/interface/', body);
  expect(answer.body).toEqual({ success: true });
  expect(answer.status).toBe(200);
}

describe('the base bodies are accepted', () => {
  it.each([
    ['TLS', TLS],
    ['PEAP', PEAP],
    ['PEAP+TLS', PEAP_TLS],
    ['MD5', MD5],
    ['static', STATIC],
    ['static inet6', STATIC6],
    ['wireless personal', WLAN],
    ['wireless enterprise', WLAN_ENTERPRISE],
    ['VLAN', VLAN],
    ['bridge', { name: 'bridge1', family: 'inet', method: 'dhcp' }],
    ['inet6 SLAAC', { name: 'eth1', family: 'inet6', method: 'auto' }],
    ['manual', { name: 'eth1', family: 'inet', method: 'manual' }],
    [
      'every optional addressing field',
      {
        ...STATIC,
        dns_nameservers: ['192.0.2.53', '2001:db8::53'],
        dns_search: ['lab.example.'],
        routes: [{ destination: '10.0.0.0/8', gateway: '192.0.2.254', metric: 10 }],
        mtu: 1500,
        link_speed: 100,
        link_duplex: 'full',
        link_autoneg: false,
      },
    ],
    ['a 64-hex-digit passphrase', { ...WLAN, passphrase: 'ab'.repeat(32) }],
    ['an open network', without({ ...WLAN, security: 'open' }, 'passphrase')],
  ])('%s', async (_label, body) => {
    await accepted(body);
  });
});

describe('types and ranges (every field is known)', () => {
  it.each([
    ['an unknown field', { ...STATIC, foo: 1 }, 'Unknown field "foo".'],
    [
      'an unknown field in a route',
      { ...STATIC, routes: [{ destination: '10.0.0.0/8', gateway: '192.0.2.254', via: 'x' }] },
      'Unknown field "routes[0].via".',
    ],
    ['a missing name', without(STATIC, 'name'), 'Field "name" is required.'],
    ['a name that is not a string', { ...STATIC, name: 5 }, 'Field "name" must be an interface name.'],
    ['a missing family', without(STATIC, 'family'), 'Field "family" is required.'],
    ['an unknown family', { ...STATIC, family: 'ipx' }, 'Field "family" must be "inet" or "inet6".'],
    ['a missing method', without(STATIC, 'method'), 'Field "method" is required.'],
    [
      'an unknown method',
      { ...STATIC, method: 'bootp' },
      'Field "method" must be "dhcp", "static", "auto" or "manual".',
    ],
    ['an address that is not a string', { ...STATIC, address: 3232235521 }, 'Field "address" must be a string.'],
    ['mtu below 576', { ...STATIC, mtu: 500 }, 'Field "mtu" must be an integer from 576 to 9000.'],
    ['mtu above 9000', { ...STATIC, mtu: 9001 }, 'Field "mtu" must be an integer from 576 to 9000.'],
    ['mtu as a string', { ...STATIC, mtu: '1500' }, 'Field "mtu" must be an integer from 576 to 9000.'],
    ['mtu with a fraction', { ...STATIC, mtu: 1500.5 }, 'Field "mtu" must be an integer from 576 to 9000.'],
    [
      'link_speed not an integer',
      { ...STATIC, link_speed: 'fast', link_autoneg: false },
      'Field "link_speed" must be a speed in Mb/s (a positive integer).',
    ],
    ['link_duplex unknown', { ...STATIC, link_duplex: 'quarter' }, 'Field "link_duplex" must be "half" or "full".'],
    ['link_autoneg not a boolean', { ...STATIC, link_autoneg: 'yes' }, 'Field "link_autoneg" must be true or false.'],
    [
      'dns_nameservers not a list',
      { ...STATIC, dns_nameservers: '192.0.2.53' },
      'Field "dns_nameservers" must be a list of IP addresses.',
    ],
    [
      'dns_search not a list',
      { ...STATIC, dns_search: 'lab.example' },
      'Field "dns_search" must be a list of domain names.',
    ],
    ['routes not a list', { ...STATIC, routes: {} }, 'Field "routes" must be a list of routes.'],
    [
      'a route without gateway',
      { ...STATIC, routes: [{ destination: '10.0.0.0/8' }] },
      'Field "routes[0].gateway" is required.',
    ],
    [
      'a negative route metric',
      { ...STATIC, routes: [{ destination: '10.0.0.0/8', gateway: '192.0.2.254', metric: -1 }] },
      'Field "routes[0].metric" must be a non-negative integer.',
    ],
    [
      'an unknown security',
      { ...WLAN, security: 'wep' },
      'Field "security" must be "open", "wpa2_personal" or "wpa2_enterprise".',
    ],
    [
      'an unknown wpa_key_mgmt',
      { ...TLS, wpa_key_mgmt: 'WPA-PSK' },
      'Field "wpa_key_mgmt" must be "IEEE8021X" or "WPA-EAP".',
    ],
    ['an unknown EAP type', { ...TLS, wpa_eap: 'TTLS' }, 'Field "wpa_eap" must be "PEAP", "TLS" or "MD5".'],
    [
      'an unknown wpa_phase1',
      { ...PEAP, wpa_phase1: 'peapver=2' },
      'Field "wpa_phase1" must be "peapver=0" or "peapver=1".',
    ],
    [
      'an unknown wpa_phase2',
      { ...PEAP, wpa_phase2: 'auth=PAP' },
      'Field "wpa_phase2" must be "auth=MSCHAPV2" or "auth=TLS".',
    ],
    ['an empty wpa_identity', { ...TLS, wpa_identity: '' }, 'Field "wpa_identity" must be a non-empty string.'],
    ['a file name that is not a string', { ...TLS, wpa_ca_cert: 1 }, 'Field "wpa_ca_cert" must be a file name.'],
    ['null for a field', { ...STATIC, gateway: null }, 'Field "gateway" must be a string.'],
  ])('refuses %s', async (_label, body, sentence) => {
    await refused(body, sentence);
  });

  it('refuses a body that is not a JSON object', async () => {
    await refused([STATIC], 'Request body must be a JSON object.');
  });

  it('refuses a body that is not JSON', async () => {
    await refused('{"name": "eth1",', 'Request body is not valid JSON.');
  });
});

describe('interface names', () => {
  it.each([
    [
      'an interface the device lacks',
      { ...STATIC, name: 'eth9' },
      'Field "name" must be an interface of this device (eth0, eth1, wlan0), a VLAN <parent>.<id> of one, or bridge1; "eth9" is none of these.',
    ],
    [
      'a VLAN of an interface the device lacks',
      { ...VLAN, name: 'eth7.100', vlan_raw_device: 'eth7' },
      'Field "name" must be an interface of this device (eth0, eth1, wlan0), a VLAN <parent>.<id> of one, or bridge1; "eth7.100" is none of these.',
    ],
    [
      'a second bridge',
      { ...STATIC, name: 'bridge2' },
      'Field "name" must be an interface of this device (eth0, eth1, wlan0), a VLAN <parent>.<id> of one, or bridge1; "bridge2" is none of these.',
    ],
    ['VLAN id 0', { ...VLAN, name: 'eth1.0' }, 'Field "name" has VLAN id 0; a VLAN id is 1 to 4094.'],
    ['VLAN id 4095', { ...VLAN, name: 'eth1.4095' }, 'Field "name" has VLAN id 4095; a VLAN id is 1 to 4094.'],
  ])('refuses %s', async (_label, body, sentence) => {
    await refused(body, sentence);
  });

  it('accepts VLAN ids 1 and 4094', async () => {
    await accepted({ ...VLAN, name: 'eth1.1' });
    await accepted({ ...VLAN, name: 'eth1.4094' });
  });
});

describe('addressing', () => {
  it.each([
    [
      'auto (SLAAC) for inet',
      { name: 'eth1', family: 'inet', method: 'auto' },
      'Field "method" "auto" (SLAAC) is only for family "inet6".',
    ],
    ['static without address', without(STATIC, 'address'), 'Field "address" is required with method "static".'],
    ['static without netmask', without(STATIC, 'netmask'), 'Field "netmask" is required with method "static".'],
    ['address with dhcp', { ...STATIC, method: 'dhcp' }, 'Field "address" is not allowed with method "dhcp".'],
    [
      'netmask with dhcp',
      { name: 'eth1', family: 'inet', method: 'dhcp', netmask: '255.255.255.0' },
      'Field "netmask" is not allowed with method "dhcp".',
    ],
    [
      'gateway with dhcp',
      { name: 'eth1', family: 'inet', method: 'dhcp', gateway: '192.0.2.1' },
      'Field "gateway" is not allowed with method "dhcp".',
    ],
    [
      'address with auto',
      { name: 'eth1', family: 'inet6', method: 'auto', address: '2001:db8::1' },
      'Field "address" is not allowed with method "auto".',
    ],
    [
      'gateway with auto',
      { name: 'eth1', family: 'inet6', method: 'auto', gateway: '2001:db8::1' },
      'Field "gateway" is not allowed with method "auto".',
    ],
    [
      'an IPv6 address for inet',
      { ...STATIC, address: '2001:db8::10' },
      'Field "address" must be an IPv4 address for family "inet".',
    ],
    [
      'an IPv4 address for inet6',
      { ...STATIC6, address: '192.0.2.10' },
      'Field "address" must be an IPv6 address for family "inet6".',
    ],
    [
      'a malformed address',
      { ...STATIC, address: '192.0.2.300' },
      'Field "address" must be an IPv4 address for family "inet".',
    ],
    [
      'a non-contiguous netmask',
      { ...STATIC, netmask: '255.0.255.0' },
      'Field "netmask" must be a dotted IPv4 netmask such as "255.255.255.0" for family "inet".',
    ],
    [
      'a prefix length for inet',
      { ...STATIC, netmask: '24' },
      'Field "netmask" must be a dotted IPv4 netmask such as "255.255.255.0" for family "inet".',
    ],
    [
      'a dotted netmask for inet6',
      { ...STATIC6, netmask: '255.255.255.0' },
      'Field "netmask" must be a prefix length from 0 to 128 such as "64" for family "inet6".',
    ],
    [
      'prefix length 129',
      { ...STATIC6, netmask: '129' },
      'Field "netmask" must be a prefix length from 0 to 128 such as "64" for family "inet6".',
    ],
    [
      'a gateway of the other family',
      { ...STATIC, gateway: '2001:db8::1' },
      'Field "gateway" must be an IPv4 address for family "inet".',
    ],
    [
      'a name server that is not an address',
      { ...STATIC, dns_nameservers: ['192.0.2.53', 'dns.example'] },
      'Field "dns_nameservers[1]" must be an IP address.',
    ],
    [
      'a search domain that is not a domain',
      { ...STATIC, dns_search: ['bad domain'] },
      'Field "dns_search[0]" must be a domain name.',
    ],
    [
      'a route destination without prefix',
      { ...STATIC, routes: [{ destination: '10.0.0.0', gateway: '192.0.2.254' }] },
      'Field "routes[0].destination" must be an IPv4 CIDR such as "10.0.0.0/8" for family "inet".',
    ],
    [
      'an IPv4 route on inet6',
      { ...STATIC6, routes: [{ destination: '10.0.0.0/8', gateway: '2001:db8::fe' }] },
      'Field "routes[0].destination" must be an IPv6 CIDR such as "2001:db8::/32" for family "inet6".',
    ],
    [
      'a route gateway of the other family',
      { ...STATIC, routes: [{ destination: '10.0.0.0/8', gateway: '2001:db8::fe' }] },
      'Field "routes[0].gateway" must be an IPv4 address for family "inet".',
    ],
  ])('refuses %s', async (_label, body, sentence) => {
    await refused(body, sentence);
  });
});

describe('transmission parameters must fit GET /appliance/capability', () => {
  it.each([
    [
      'link_speed on a wireless interface',
      { ...WLAN, link_speed: 100, link_autoneg: false },
      'Field "link_speed" does not fit interface "wlan0": only wired physical interfaces have transmission parameters (GET /appliance/capability).',
    ],
    [
      'link_autoneg on a VLAN',
      { ...VLAN, link_autoneg: true },
      'Field "link_autoneg" does not fit interface "eth1.100": only wired physical interfaces have transmission parameters (GET /appliance/capability).',
    ],
    [
      'a speed the port lacks',
      { ...STATIC, link_speed: 2500, link_autoneg: false },
      'Field "link_speed" must be one of 10, 100, 1000 on interface "eth1" (GET /appliance/capability).',
    ],
    [
      'a fixed speed with auto-negotiation left on',
      { ...STATIC, link_speed: 100 },
      'Field "link_autoneg" must be false when "link_speed" fixes the speed.',
    ],
    [
      'a fixed speed with auto-negotiation on',
      { ...STATIC, link_speed: 100, link_autoneg: true },
      'Field "link_autoneg" must be false when "link_speed" fixes the speed.',
    ],
  ])('refuses %s', async (_label, body, sentence) => {
    await refused(body, sentence);
  });

  it('refuses a duplex or auto-negotiation the port lacks (m70 SFP+ port)', async () => {
    const m70 = await startSimulator({ model: 'm70' });
    const client = apiClient(m70);
    try {
      const port = { name: 'eth2', family: 'inet', method: 'dhcp' };
      const duplex = await client.post('/interface/', { ...port, link_duplex: 'half' });
      expect(duplex.body.error).toBe(
        'Field "link_duplex" must be one of full on interface "eth2" (GET /appliance/capability).',
      );
      const autoneg = await client.post('/interface/', { ...port, link_autoneg: true });
      expect(autoneg.body.error).toBe(
        'Field "link_autoneg" cannot be true: interface "eth2" does not auto-negotiate (GET /appliance/capability).',
      );
      expect(
        (await client.post('/interface/', { ...port, link_speed: 10000, link_duplex: 'full', link_autoneg: false }))
          .status,
      ).toBe(200);
    } finally {
      await client.close();
      await m70.close();
    }
  });
});

describe('VLANs', () => {
  it.each([
    [
      'vlan_raw_device on a physical interface',
      { ...STATIC, vlan_raw_device: 'eth0' },
      'Field "vlan_raw_device" is only for VLAN interfaces such as "eth0.100".',
    ],
    [
      'a VLAN without vlan_raw_device',
      without(VLAN, 'vlan_raw_device'),
      'Field "vlan_raw_device" is required for VLAN interface "eth1.100".',
    ],
    [
      'a VLAN naming another parent',
      { ...VLAN, vlan_raw_device: 'eth0' },
      'Field "vlan_raw_device" must be "eth1", the parent of "eth1.100".',
    ],
  ])('refuses %s', async (_label, body, sentence) => {
    await refused(body, sentence);
  });

  const VLAN_DOT1X = {
    ...VLAN,
    wpa_key_mgmt: 'IEEE8021X',
    wpa_eap: 'MD5',
    wpa_identity: 'md5user',
    wpa_password: 'md5secret',
  };
  const VLAN_RULE =
    'Field "wpa_key_mgmt": VLAN "eth1.100" may use 802.1X only if its vlan_raw_device "eth1" is configured dhcp or static with 802.1X (judged on the pending configuration).';

  it('refuses 802.1X on a VLAN whose parent has no stanza', async () => {
    await refused(VLAN_DOT1X, VLAN_RULE);
  });

  it('refuses 802.1X on a VLAN whose parent has no 802.1X', async () => {
    await accepted(STATIC);
    await refused(VLAN_DOT1X, VLAN_RULE);
  });

  it('refuses 802.1X on a VLAN whose parent is manual, even with 802.1X', async () => {
    await accepted({ ...MD5, method: 'manual' });
    await refused(VLAN_DOT1X, VLAN_RULE);
  });

  it('accepts 802.1X on a VLAN whose parent is pending dhcp with 802.1X', async () => {
    await accepted(MD5);
    await accepted(VLAN_DOT1X);
  });

  it('judges on the pending view: an active parent with 802.1X marked for removal does not count', async () => {
    await accepted(MD5);
    await restartNetworking(sim, api);
    expect((await api.del('/interface/eth1/?family=inet')).status).toBe(200);
    await refused(VLAN_DOT1X, VLAN_RULE);
  });
});

describe('wireless', () => {
  it.each([
    ['ssid on a wired interface', { ...STATIC, ssid: 'lab' }, 'Field "ssid" is only for wireless interfaces.'],
    [
      'security on a wired interface',
      { ...STATIC, security: 'open' },
      'Field "security" is only for wireless interfaces.',
    ],
    [
      'passphrase on a wired interface',
      { ...STATIC, passphrase: 'correct horse' },
      'Field "passphrase" is only for wireless interfaces.',
    ],
    [
      'a wireless stanza without ssid',
      without(WLAN, 'ssid'),
      'Field "ssid" is required for wireless interface "wlan0".',
    ],
    ['an empty ssid', { ...WLAN, ssid: '' }, 'Field "ssid" must be 1 to 32 bytes.'],
    [
      'an ssid of 33 bytes (11 three-byte characters)',
      { ...WLAN, ssid: '€'.repeat(11) },
      'Field "ssid" must be 1 to 32 bytes.',
    ],
    [
      'a wireless stanza without security',
      without(WLAN, 'security'),
      'Field "security" is required for wireless interface "wlan0".',
    ],
    [
      'a passphrase on an open network',
      { ...WLAN, security: 'open' },
      'Field "passphrase" is only for security "wpa2_personal".',
    ],
    [
      'a passphrase with wpa2_enterprise',
      { ...WLAN_ENTERPRISE, passphrase: 'correct horse' },
      'Field "passphrase" is only for security "wpa2_personal".',
    ],
    [
      'wpa2_personal without passphrase',
      without(WLAN, 'passphrase'),
      'Field "passphrase" is required with security "wpa2_personal".',
    ],
    [
      'a passphrase of 7 characters',
      { ...WLAN, passphrase: 'short12' },
      'Field "passphrase" must be 8 to 63 printable ASCII characters or 64 hex digits.',
    ],
    [
      'a passphrase of 64 characters that are not hex',
      { ...WLAN, passphrase: 'x'.repeat(64) },
      'Field "passphrase" must be 8 to 63 printable ASCII characters or 64 hex digits.',
    ],
    [
      'a passphrase with a non-ASCII character',
      { ...WLAN, passphrase: 'pässphrase' },
      'Field "passphrase" must be 8 to 63 printable ASCII characters or 64 hex digits.',
    ],
    [
      'wpa2_enterprise without wpa_key_mgmt',
      without(WLAN_ENTERPRISE, 'wpa_key_mgmt'),
      'Field "wpa_key_mgmt" must be "WPA-EAP" with security "wpa2_enterprise".',
    ],
    [
      'wpa2_enterprise with IEEE8021X',
      { ...WLAN_ENTERPRISE, wpa_key_mgmt: 'IEEE8021X' },
      'Field "wpa_key_mgmt" must be "WPA-EAP" with security "wpa2_enterprise".',
    ],
    [
      '802.1X fields with wpa2_personal',
      { ...WLAN, wpa_identity: 'alice' },
      'Field "wpa_identity" is only for security "wpa2_enterprise".',
    ],
    [
      'MD5 on a wireless interface',
      { ...WLAN_ENTERPRISE, wpa_eap: 'MD5', wpa_phase2: undefined },
      'Field "wpa_eap" "MD5" is refused on a wireless interface.',
    ],
  ])('refuses %s', async (_label, body, sentence) => {
    await refused(body, sentence);
  });
});

describe('802.1X', () => {
  it.each([
    [
      '802.1X fields without wpa_key_mgmt',
      without(TLS, 'wpa_key_mgmt'),
      'Field "wpa_key_mgmt" is required when 802.1X fields such as "wpa_eap" are given.',
    ],
    [
      'WPA-EAP on a wired interface',
      { ...TLS, wpa_key_mgmt: 'WPA-EAP' },
      'Field "wpa_key_mgmt" must be "IEEE8021X" on interface "eth1"; "WPA-EAP" is for wireless.',
    ],
    ['wpa_key_mgmt without wpa_eap', without(TLS, 'wpa_eap'), 'Field "wpa_eap" is required with "wpa_key_mgmt".'],
    ['TLS without wpa_identity', without(TLS, 'wpa_identity'), 'Field "wpa_identity" is required with EAP type "TLS".'],
    [
      'PEAP without wpa_identity',
      without(PEAP, 'wpa_identity'),
      'Field "wpa_identity" is required with EAP type "PEAP".',
    ],
    ['MD5 without wpa_identity', without(MD5, 'wpa_identity'), 'Field "wpa_identity" is required with EAP type "MD5".'],
    ['wpa_password with TLS', { ...TLS, wpa_password: 'x' }, 'Field "wpa_password" does not fit EAP type "TLS".'],
    ['wpa_phase1 with TLS', { ...TLS, wpa_phase1: 'peapver=0' }, 'Field "wpa_phase1" does not fit EAP type "TLS".'],
    ['wpa_phase2 with TLS', { ...TLS, wpa_phase2: 'auth=TLS' }, 'Field "wpa_phase2" does not fit EAP type "TLS".'],
    [
      'the second set with TLS',
      { ...TLS, wpa_ca_cert2: 'ca.pem' },
      'Field "wpa_ca_cert2" does not fit EAP type "TLS".',
    ],
    ['wpa_ca_cert with MD5', { ...MD5, wpa_ca_cert: 'ca.pem' }, 'Field "wpa_ca_cert" does not fit EAP type "MD5".'],
    [
      'wpa_client_cert with MD5',
      { ...MD5, wpa_client_cert: 'client.pem' },
      'Field "wpa_client_cert" does not fit EAP type "MD5".',
    ],
    [
      'wpa_private_key2 with MD5',
      { ...MD5, wpa_private_key2: 'client.key' },
      'Field "wpa_private_key2" does not fit EAP type "MD5".',
    ],
    [
      'wpa_anonymous_identity with MD5',
      { ...MD5, wpa_anonymous_identity: 'anonymous' },
      'Field "wpa_anonymous_identity" does not fit EAP type "MD5".',
    ],
    [
      'the first client set with PEAP',
      { ...PEAP, wpa_client_cert: 'client.pem' },
      'Field "wpa_client_cert" does not fit EAP type "PEAP"; PEAP with "auth=TLS" takes the second set (wpa_ca_cert2, wpa_client_cert2, wpa_private_key2).',
    ],
    [
      'the second set with PEAP and MSCHAPV2',
      { ...PEAP, wpa_ca_cert2: 'ca.pem' },
      'Field "wpa_ca_cert2" does not fit PEAP with "wpa_phase2": "auth=MSCHAPV2"; the second set is for "auth=TLS".',
    ],
    [
      'wpa_password with PEAP and TLS',
      { ...PEAP_TLS, wpa_password: 'x' },
      'Field "wpa_password" does not fit PEAP with "wpa_phase2": "auth=TLS".',
    ],
    ['PEAP without wpa_phase2', without(PEAP, 'wpa_phase2'), 'Field "wpa_phase2" is required with EAP type "PEAP".'],
    [
      'a key password without a key',
      { ...without(TLS, 'wpa_private_key'), wpa_private_key_passwd: 'x' },
      'Field "wpa_private_key_passwd" needs "wpa_private_key".',
    ],
    [
      'a second key password without a second key',
      { ...without(PEAP_TLS, 'wpa_private_key2'), wpa_private_key2_passwd: 'x' },
      'Field "wpa_private_key2_passwd" needs "wpa_private_key2".',
    ],
    ['TLS without wpa_ca_cert', without(TLS, 'wpa_ca_cert'), 'Field "wpa_ca_cert" is required with EAP type "TLS".'],
    [
      'TLS without wpa_private_key',
      without(TLS, 'wpa_private_key'),
      'Field "wpa_private_key" is required with EAP type "TLS".',
    ],
    [
      'TLS with a PEM key and no wpa_client_cert',
      without(TLS, 'wpa_client_cert'),
      'Field "wpa_client_cert" is required with EAP type "TLS" unless "wpa_private_key" is a PFX file.',
    ],
    [
      'PEAP with MSCHAPV2 and no wpa_password',
      without(PEAP, 'wpa_password'),
      'Field "wpa_password" is required with PEAP and "auth=MSCHAPV2".',
    ],
    [
      'PEAP with TLS and no wpa_ca_cert2',
      without(PEAP_TLS, 'wpa_ca_cert2'),
      'Field "wpa_ca_cert2" is required with PEAP and "auth=TLS".',
    ],
    [
      'PEAP with TLS and no wpa_private_key2',
      without(PEAP_TLS, 'wpa_private_key2'),
      'Field "wpa_private_key2" is required with PEAP and "auth=TLS".',
    ],
    [
      'PEAP with TLS, a PEM key and no wpa_client_cert2',
      without(PEAP_TLS, 'wpa_client_cert2'),
      'Field "wpa_client_cert2" is required with PEAP and "auth=TLS" unless "wpa_private_key2" is a PFX file.',
    ],
    ['MD5 without wpa_password', without(MD5, 'wpa_password'), 'Field "wpa_password" is required with EAP type "MD5".'],
  ])('refuses %s', async (_label, body, sentence) => {
    await refused(body, sentence);
  });

  it('accepts TLS with a PFX key and no client certificate', async () => {
    await accepted({
      ...without(TLS, 'wpa_client_cert'),
      wpa_private_key: 'client.pfx',
      wpa_private_key_passwd: 'pfxpass',
    });
  });

  it('accepts PEAP with TLS with a PFX second key and no second client certificate', async () => {
    await accepted({
      ...without(PEAP_TLS, 'wpa_client_cert2'),
      wpa_private_key2: 'client.pfx',
      wpa_private_key2_passwd: 'pfxpass',
    });
  });
});

describe('referenced files must already be loaded, in the matching slot', () => {
  it('refuses a file that was never uploaded', async () => {
    await refused(
      { ...TLS, wpa_ca_cert: 'nope.pem' },
      'Field "wpa_ca_cert" names file "nope.pem", which is not loaded in slot "wpa_ca_cert"; upload it with POST /interface/file/ first.',
    );
  });

  it('refuses a file loaded in another slot', async () => {
    await api.upload({ wpa_client_cert2: { name: 'only-in-slot-2.pem', content: pki.read('client.pem') } });
    await refused(
      { ...TLS, wpa_client_cert: 'only-in-slot-2.pem' },
      'Field "wpa_client_cert" names file "only-in-slot-2.pem", which is not loaded in slot "wpa_client_cert"; upload it with POST /interface/file/ first.',
    );
  });
});

describe('interface-level fields: the stanza posted last sets them for the interface', () => {
  const pendingFamilies = async () => interfaceOf(await api.get('/interface/eth1/?config_state=pending')).families;

  it('accepts an inet6 stanza whose mtu differs from the inet stanza just posted, and copies it into inet', async () => {
    await accepted({ ...STATIC, mtu: 1500 });
    await accepted({ ...STATIC6, mtu: 9000 });
    const families = await pendingFamilies();
    expect(families.inet?.mtu).toBe(9000);
    expect(families.inet6?.mtu).toBe(9000);
  });

  it('removes from the other stanza the 802.1X fields the posted stanza leaves out', async () => {
    await accepted(MD5);
    await accepted({ name: 'eth1', family: 'inet6', method: 'auto' });
    expect(await pendingFamilies()).toEqual({ inet: { method: 'dhcp' }, inet6: { method: 'auto' } });
  });

  it('copies write-only fields too, shown as <field>_set in both stanzas and never echoed', async () => {
    await accepted({ name: 'eth1', family: 'inet6', method: 'auto' });
    await accepted({ ...MD5, wpa_password: 'copied-secret-value' });
    const families = await pendingFamilies();
    const dot1x = { wpa_key_mgmt: 'IEEE8021X', wpa_eap: 'MD5', wpa_identity: 'md5user', wpa_password_set: true };
    expect(families).toEqual({ inet: { method: 'dhcp', ...dot1x }, inet6: { method: 'auto', ...dot1x } });
    expect(JSON.stringify(families)).not.toContain('copied-secret-value');
  });

  it('accepts stanzas that agree', async () => {
    await accepted({ ...MD5, mtu: 1400 });
    await accepted({ ...MD5, family: 'inet6', method: 'auto', mtu: 1400 });
  });

  it('changes the mtu of an active dual-stack interface with one POST per family, never refused in between', async () => {
    await accepted({ ...STATIC, mtu: 1500 });
    await accepted({ ...STATIC6, mtu: 1500 });
    await restartNetworking(sim, api);
    // The client changes the MTU: first inet, then inet6. Neither POST is refused.
    await accepted({ ...STATIC, mtu: 9000 });
    expect((await pendingFamilies()).inet6?.mtu).toBe(9000);
    await accepted({ ...STATIC6, mtu: 9000 });
    await restartNetworking(sim, api);
    const active = interfaceOf(await api.get('/interface/eth1/?config_state=active')).families;
    expect([active.inet?.mtu, active.inet6?.mtu]).toEqual([9000, 9000]);
  });
});
