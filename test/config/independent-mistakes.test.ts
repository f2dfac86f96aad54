import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgentConfig, type Problem } from '../../src/config/index.js';
import { validateStick } from '../../src/certs/index.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * Pairs of independent mistakes: a schema problem (unknown key, wrong value, wrong type) beside a
 * rule or certificate problem, in the same block or elsewhere. Each pair must report both, each at
 * its own place, on the first validation: no second trip to the site for the second one.
 */

const certs = new URL('../fixtures/certs/', import.meta.url).pathname;

interface Mistake {
  /** line:column key.path */
  at: string;
  message: string;
}

interface Pair {
  name: string;
  /** The Monitoring Point's keys after name and url, indented by four spaces. */
  body: string;
  /** The file's version and the device URL, when the pair is about them. */
  version?: number;
  url?: string;
  first: Mistake;
  second: Mistake;
}

const MP = 'monitoring_points[0]';

const pairs: Pair[] = [
  {
    name: 'a misspelled ipv4 method beside a wireless rule on the same interface',
    body: `    interfaces:
      wlan0:
        ipv4: { method: dchp }
        wireless: { ssid: Office, security: wpa2-personal }
`,
    first: { at: `7:25 ${MP}.interfaces.wlan0.ipv4.method`, message: '"dchp" is not one of: dhcp, static, manual' },
    second: { at: `8:19 ${MP}.interfaces.wlan0.wireless`, message: 'wpa2-personal needs a passphrase' },
  },
  {
    name: 'a wrong mtu beside a gateway outside the subnet of the same interface',
    body: `    interfaces:
      eth0:
        link: { mtu: jumbo }
        ipv4: { method: static, address: 192.0.2.10/24, gateway: 198.51.100.1 }
`,
    first: { at: `7:22 ${MP}.interfaces.eth0.link.mtu`, message: 'must be a number, not text' },
    second: {
      at: `8:66 ${MP}.interfaces.eth0.ipv4.gateway`,
      message: 'gateway 198.51.100.1 is outside the subnet of 192.0.2.10/24',
    },
  },
  {
    name: 'a misspelled passphrase key beside the passphrase it leaves missing',
    body: `    interfaces:
      wlan0:
        ipv4: { method: dhcp }
        wireless: { ssid: Office, security: wpa2-personal, pasphrase: Correct-Horse-9 }
`,
    first: { at: `8:60 ${MP}.interfaces.wlan0.wireless.pasphrase`, message: "unknown key 'pasphrase'" },
    second: { at: `8:19 ${MP}.interfaces.wlan0.wireless`, message: 'wpa2-personal needs a passphrase' },
  },
  {
    name: 'a misspelled method on eth0 beside a ca_cert on eth1 that is not a CA',
    body: `    interfaces:
      eth0:
        ipv4: { method: dchp }
      eth1:
        ipv4: { method: dhcp }
        dot1x: { eap: tls, identity: mp1, ca_cert: not-a-ca.pem, client_cert: client-cert.pem, private_key: client-key.pem }
`,
    first: { at: `7:25 ${MP}.interfaces.eth0.ipv4.method`, message: '"dchp" is not one of: dhcp, static, manual' },
    second: {
      at: `10:52 ${MP}.interfaces.eth1.dot1x.ca_cert`,
      message: 'not-a-ca.pem is not a CA certificate (no basicConstraints CA:TRUE), but ca_cert needs one',
    },
  },
  {
    name: 'an unknown key in a dot1x block beside a key that does not fit its EAP type',
    body: `    interfaces:
      eth0:
        ipv4: { method: dhcp }
        dot1x: { eap: md5, identity: mp1, password: Md5-Secret-77, colour: red, inner: mschapv2 }
`,
    first: { at: `8:68 ${MP}.interfaces.eth0.dot1x.colour`, message: "unknown key 'colour'" },
    second: { at: `8:81 ${MP}.interfaces.eth0.dot1x.inner`, message: "'inner' does not fit EAP-MD5" },
  },
  {
    name: 'a wrong eap beside an interface without any address family',
    body: `    interfaces:
      eth0:
        ipv4: { method: dhcp }
        dot1x: { eap: ttls, identity: mp1 }
      eth1:
        link: { mtu: 1500 }
`,
    first: { at: `8:23 ${MP}.interfaces.eth0.dot1x.eap`, message: '"ttls" is not one of: peap, tls, md5' },
    second: { at: `10:9 ${MP}.interfaces.eth1`, message: 'interface eth1 has neither ipv4 nor ipv6' },
  },
  {
    name: 'a ssid of the wrong type beside a missing passphrase in the same block',
    body: `    interfaces:
      wlan0:
        ipv4: { method: dhcp }
        wireless: { ssid: [a, b], security: wpa2-personal }
`,
    first: { at: `8:27 ${MP}.interfaces.wlan0.wireless.ssid`, message: 'must be text, not a list' },
    second: { at: `8:19 ${MP}.interfaces.wlan0.wireless`, message: 'wpa2-personal needs a passphrase' },
  },
  {
    name: 'a text autoneg beside an address without a prefix on the same interface',
    body: `    interfaces:
      eth0:
        link: { autoneg: "no" }
        ipv4: { method: static, address: 192.0.2.10 }
`,
    first: { at: `7:26 ${MP}.interfaces.eth0.link.autoneg`, message: 'must be a true/false value, not text' },
    second: { at: `8:42 ${MP}.interfaces.eth0.ipv4.address`, message: "'192.0.2.10' has no prefix length" },
  },
  {
    name: 'an unknown top-level key of the Monitoring Point beside a URL with a path',
    url: 'https://192.0.2.10/admin',
    body: `    colour: blue
    interfaces:
      eth0:
        ipv4: { method: dhcp }
`,
    first: { at: `5:5 ${MP}.colour`, message: "unknown key 'colour'" },
    second: {
      at: '4:10 monitoring_points[0].url',
      message: "'https://192.0.2.10/admin' has a path; give only https://host[:port]",
    },
  },
  {
    name: 'a wrong prune beside an insecure tls (a warning still said)',
    body: `    prune: sometimes
    tls: { fingerprint_sha256: "12:34" }
`,
    first: { at: `5:12 ${MP}.prune`, message: 'must be a true/false value, not text' },
    second: {
      at: `6:32 ${MP}.tls.fingerprint_sha256`,
      message: 'a SHA-256 fingerprint is 32 bytes in hex (64 hex digits, colons optional)',
    },
  },
  {
    name: 'an ACL entry with a wrong protocol beside another entry with a wrong port range',
    body: `    acl:
      - { protocol: icmp, ports: 22, sources: [10.0.0.0/8], interfaces: [eth0] }
      - { protocol: tcp, ports: "90-80", sources: [10.0.0.0/8], interfaces: [eth0] }
`,
    first: { at: `6:21 ${MP}.acl[0].protocol`, message: '"icmp" is not one of: tcp, udp' },
    second: {
      at: `7:33 ${MP}.acl[1].ports`,
      message: 'ports "90-80" is not a port (1-65535) or a range N-M with N <= M',
    },
  },
  {
    name: 'a wrong ACL source beside a wrong port in the same entry',
    body: `    acl:
      - { protocol: tcp, ports: "70000", sources: [nowhere], interfaces: [eth0] }
`,
    first: { at: `6:52 ${MP}.acl[0].sources[0]`, message: "'nowhere' is not a valid address/prefix (CIDR)" },
    second: {
      at: `6:33 ${MP}.acl[0].ports`,
      message: 'ports "70000" is not a port (1-65535) or a range N-M with N <= M',
    },
  },
  {
    name: 'a wrong VLAN id beside a route outside the subnet',
    body: `    interfaces:
      eth0.5000:
        vlan: { link: eth0, id: 5000 }
        ipv4: { method: dhcp }
      eth1:
        ipv4:
          method: static
          address: 192.0.2.10/24
          routes: [{ to: 10.0.0.0/8, via: 198.51.100.1 }]
`,
    first: { at: `7:33 ${MP}.interfaces.eth0.5000.vlan.id`, message: 'must be at most 4094' },
    second: {
      at: `13:43 ${MP}.interfaces.eth1.ipv4.routes[0].via`,
      message: 'next hop 198.51.100.1 is outside the subnet of 192.0.2.10/24',
    },
  },
  {
    name: 'a wrong route metric beside a route destination with host bits in the same list',
    body: `    interfaces:
      eth0:
        ipv4:
          method: static
          address: 192.0.2.10/24
          routes:
            - { to: 10.0.0.1/8, via: 192.0.2.1 }
            - { to: 10.1.0.0/16, via: 192.0.2.1, metric: -1 }
`,
    first: { at: `12:58 ${MP}.interfaces.eth0.ipv4.routes[1].metric`, message: 'must be at least 0' },
    second: {
      at: `11:21 ${MP}.interfaces.eth0.ipv4.routes[0].to`,
      message: "route destination '10.0.0.1/8' has host bits set",
    },
  },
  {
    name: 'an unknown key in ipv6 beside an address on a dhcp ipv4',
    body: `    interfaces:
      eth0:
        ipv4: { method: dhcp, address: 192.0.2.10/24 }
        ipv6: { method: auto, privacy: true }
`,
    first: { at: `8:31 ${MP}.interfaces.eth0.ipv6.privacy`, message: "unknown key 'privacy'" },
    second: { at: `7:31 ${MP}.interfaces.eth0.ipv4.address`, message: "'address' does not fit method dhcp" },
  },
  {
    name: 'a wrong peap_version beside a PEAP without its inner method',
    body: `    interfaces:
      eth0:
        ipv4: { method: dhcp }
        dot1x: { eap: peap, identity: mp1, password: Peap-Secret-88, peap_version: 2, ca_cert: fixture-ca.pem }
`,
    first: { at: `8:84 ${MP}.interfaces.eth0.dot1x.peap_version`, message: '2 is not one of: 0, 1' },
    second: { at: `8:16 ${MP}.interfaces.eth0.dot1x`, message: 'PEAP needs an inner method' },
  },
  {
    name: 'a duplicate device beside a wrong type in the first Monitoring Point',
    body: `    allow_disconnect: 1
  - name: mp2
    url: https://192.0.2.10
`,
    first: { at: `5:23 ${MP}.allow_disconnect`, message: 'must be a true/false value, not a whole number' },
    second: {
      at: '7:10 monitoring_points[1].url',
      message: 'device https://192.0.2.10 is listed twice (also monitoring_points[0])',
    },
  },
  {
    name: 'a dot1x block the schema refuses beside a password given twice on the device',
    body: `    password: Admin-Secret-11
    password_file: admin.pw
    interfaces:
      eth0:
        ipv4: { method: dhcp }
        dot1x: [eap, md5]
`,
    first: { at: `10:16 ${MP}.interfaces.eth0.dot1x`, message: 'must be a block of keys, not a list' },
    second: { at: `6:5 ${MP}.password_file`, message: 'password is given twice, as password and as password_file' },
  },
  {
    name: 'a wrong service_hostname beside a client certificate used as a CA',
    body: `    service_hostname: ""
    interfaces:
      eth0:
        ipv4: { method: dhcp }
        dot1x: { eap: peap, inner: mschapv2, identity: mp1, password: Peap-Secret-88, ca_cert: client-cert.pem }
`,
    first: { at: `5:23 ${MP}.service_hostname`, message: 'must not be empty' },
    second: {
      at: `9:96 ${MP}.interfaces.eth0.dot1x.ca_cert`,
      message: 'client-cert.pem is not a CA certificate (no basicConstraints CA:TRUE), but ca_cert needs one',
    },
  },
  {
    name: 'a wrong version beside a gateway that is the interface address',
    version: 2,
    body: `    interfaces:
      eth0:
        ipv4: { method: static, address: 192.0.2.10/24, gateway: 192.0.2.10 }
`,
    first: { at: '1:10 version', message: 'version 2 is not supported; this build of mpprov reads version 1' },
    second: {
      at: `7:66 ${MP}.interfaces.eth0.ipv4.gateway`,
      message: "gateway 192.0.2.10 is this interface's own address",
    },
  },
];

function stickOf(pair: Pair): string {
  const url = pair.url ?? 'https://192.0.2.10';
  return `version: ${pair.version ?? 1}\nmonitoring_points:\n  - name: mp1\n    url: ${url}\n${pair.body}`;
}

const placed = (p: Problem) => ({ at: `${p.line}:${p.column} ${p.path}`, message: p.message });

describe('two independent mistakes in a stick file are both reported', () => {
  it('the corpus holds at least 19 pairs', () => {
    expect(pairs.length).toBeGreaterThanOrEqual(19);
  });

  it.each(pairs.map((pair) => [pair.name, pair] as const))('%s', async (_name, pair) => {
    const dir = tempFolder('two-mistakes');
    writeFileSync(join(dir, 'mpprov.yaml'), stickOf(pair));
    writeFileSync(join(dir, 'admin.pw'), 'Admin-Secret-22\n');
    for (const name of ['not-a-ca.pem', 'client-cert.pem', 'client-key.pem', 'fixture-ca.pem'])
      copyFileSync(join(certs, name), join(dir, name));
    const validated = await validateStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    const found = validated.problems.map(placed);
    expect(found).toContainEqual(pair.first);
    expect(found).toContainEqual(pair.second);
    // Nothing of a file with a schema problem is ever applied.
    expect(validated.model).toBeUndefined();
  });
});

describe('two independent mistakes in agent.yaml are both reported', () => {
  const agentPairs = [
    {
      name: 'a wrong log level beside a status page that is not on loopback',
      text: 'log_level: verbose\nstatus_page: { listen: "0.0.0.0:8471" }\n',
      first: { at: '1:12 log_level', message: '"verbose" is not one of: error, warn, info, debug' },
      second: {
        at: '2:24 status_page.listen',
        message: "'0.0.0.0' is not a loopback address: the status page is served on this laptop only and has no login",
      },
    },
    {
      name: 'an unknown key beside required signatures without allowed signers',
      text: 'colour: blue\nsignatures: { required: true }\n',
      first: { at: '1:1 colour', message: "unknown key 'colour'" },
      second: {
        at: '2:25 signatures.required',
        message: 'signatures are required but no allowed_signers file says whose',
      },
    },
    {
      name: 'a wrong concurrency beside a device entry that is not a URL',
      text: 'concurrency: many\ndevices:\n  not-a-url:\n    username: admin\n',
      first: { at: '1:14 concurrency', message: 'must be a number, not text' },
      second: { at: '3:3 devices.not-a-url', message: "'not-a-url' is not a device URL" },
    },
  ];

  it.each(agentPairs.map((pair) => [pair.name, pair] as const))('%s', async (_name, pair) => {
    const dir = tempFolder('two-mistakes-agent');
    writeFileSync(join(dir, 'agent.yaml'), pair.text);
    const loaded = await loadAgentConfig(join(dir, 'agent.yaml'), {});
    const found = loaded.problems.map(placed);
    expect(found).toContainEqual(pair.first);
    expect(found).toContainEqual(pair.second);
    // A file with a schema problem is not half used: the agent runs on nothing of it.
    expect(loaded.config.statusPage).toBeUndefined();
  });
});
