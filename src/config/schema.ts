import { z } from 'zod';
import { ipFamily, isDomainName, parseCidr } from './ip-address.js';
import { isLocationText, isPathTarget } from './path-target.js';
import { credentialFile, secretFile, keysOf, secretKeysOf, secretString } from './schema-roles.js';

/**
 * The stick's configuration file (mpprov.yaml), version 1. Types and formats live here; rules that
 * relate several keys (gateway inside the subnet, which 802.1X keys fit which EAP type, ...) live in
 * the rule checks, so each message can point at the exact key. The one transform turns each inline
 * secret into a Secret as it is read (secretString); the JSON Schema for editors describes the
 * input, where a secret is a string.
 */

const SUPPORTED_VERSIONS = [1] as const;

const ip = z.string().refine((v) => ipFamily(v) !== undefined, { error: 'is not a valid IPv4 or IPv6 address' });
const cidr = z.string().refine((v) => parseCidr(v) !== undefined, {
  error: 'is not a valid address/prefix (CIDR)',
  params: { hint: 'write it like 10.0.0.0/8 or 2001:db8::/32' },
});
const domain = z.string().refine(isDomainName, { error: 'is not a valid domain name' });
const FILE_TEXT = 'path of a file, relative to the folder of this configuration file';
/** A certificate or key, read and checked with its neighbours. */
const relativeFile = credentialFile(FILE_TEXT);
/** `<secret>_file`: the secret's value is the file's content. */
const secretInFile = secretFile(FILE_TEXT);
const secret = secretString();

/** The administrative user: HTTP Basic authentication ends the user name at its first ':'. */
export const AdminUsername = z
  .string()
  .min(1)
  .refine((v) => !v.includes(':'), {
    error: "holds ':', where HTTP Basic authentication ends the user name",
    params: { hint: "write the device's user name without ':'" },
  });

const Route = z
  .strictObject({
    to: z.string().describe('destination network, e.g. 10.0.0.0/8'),
    via: ip.describe('next-hop address'),
    metric: z.number().int().min(0).max(2147483647).optional(),
  })
  .describe('a static route');

const Mtu = z.number().int().min(576).max(9000);

function familySchema(methods: readonly [string, ...string[]], description: string) {
  return z
    .strictObject({
      method: z.enum(methods).describe('how the interface gets its address'),
      address: z.string().optional().describe('static only: address with prefix length, e.g. 192.0.2.10/24'),
      gateway: ip.optional().describe("static only: default gateway, inside the address's subnet"),
      nameservers: z.array(ip).optional().describe('DNS servers for this interface'),
      search: z.array(domain).optional().describe('DNS search domains bound to this interface'),
      routes: z.array(Route).optional().describe('static routes through this interface'),
      // inventory.md's template sets the MTU here; the device keeps one MTU per interface, for both
      // families (admin-api-model.md), as link.mtu says it. Any of the three, all equal.
      mtu: Mtu.optional().describe("the interface's MTU, as link.mtu: one value for both families"),
    })
    .describe(description);
}

export const Ipv4 = familySchema(['dhcp', 'static', 'manual'], 'IPv4 (inet) addressing');
export const Ipv6 = familySchema(['auto', 'dhcp', 'static', 'manual'], 'IPv6 (inet6) addressing; auto is SLAAC');

const Link = z
  .strictObject({
    mtu: Mtu.optional(),
    speed: z.number().int().positive().optional().describe('fixed speed in Mb/s; needs autoneg: false'),
    duplex: z.enum(['half', 'full']).optional(),
    autoneg: z.boolean().optional(),
  })
  .describe('transmission parameters');

export const InnerTls = z
  .strictObject({
    ca_cert: relativeFile.optional(),
    client_cert: relativeFile.optional(),
    private_key: relativeFile,
    private_key_password: secret.optional(),
    private_key_password_file: secretInFile.optional(),
  })
  .describe('PEAP with inner EAP-TLS: the second certificate set');

export const Dot1x = z
  .strictObject({
    eap: z.enum(['peap', 'tls', 'md5']),
    inner: z.enum(['mschapv2', 'tls']).optional().describe('peap only: the inner (phase 2) method'),
    peap_version: z.literal([0, 1]).optional().describe('peap only; default 0 (phase1 "peapver=0")'),
    identity: z.string().min(1),
    anonymous_identity: z.string().min(1).optional(),
    password: secret.optional(),
    password_file: secretInFile.optional(),
    ca_cert: relativeFile.optional().describe('CA the Monitoring Point uses to verify the RADIUS server'),
    client_cert: relativeFile.optional(),
    private_key: relativeFile.optional().describe('PEM, DER or PFX'),
    private_key_password: secret.optional(),
    private_key_password_file: secretInFile.optional(),
    inner_tls: InnerTls.optional(),
  })
  .describe('802.1X (EAP) settings');

export const Wireless = z
  .strictObject({
    ssid: z.string().min(1),
    security: z.enum(['open', 'wpa2-personal', 'wpa2-enterprise']),
    passphrase: secret.optional(),
    passphrase_file: secretInFile.optional(),
  })
  .describe('wireless settings; wpa2-enterprise takes a dot1x block beside this one');

const Vlan = z
  .strictObject({
    link: z.string().min(1).describe('the parent physical interface'),
    id: z.number().int().min(1).max(4094),
  })
  .describe('VLAN: the interface name must be <link>.<id>');

export const Interface = z.strictObject({
  vlan: Vlan.optional(),
  ipv4: Ipv4.optional(),
  ipv6: Ipv6.optional(),
  link: Link.optional(),
  dot1x: Dot1x.optional(),
  wireless: Wireless.optional(),
});

export const Tls = z
  .strictObject({
    fingerprint_sha256: z
      .string()
      .optional()
      .describe('SHA-256 fingerprint of the device certificate, 32 bytes hex, colons optional'),
    ca: relativeFile.optional().describe('CA certificate that issued the device certificate'),
    insecure: z.boolean().optional().describe('skip verification (always warned about)'),
  })
  .describe("how to trust the device's HTTPS certificate: exactly one of the three");

export const AclRule = z
  .strictObject({
    action: z.literal('permit').optional(),
    protocol: z.enum(['tcp', 'udp']),
    ports: z.union([z.string(), z.number().int()]).describe('"N" or "N-M", 1-65535'),
    sources: z.array(cidr).min(1),
    interfaces: z.array(z.string().min(1)).min(1),
  })
  .describe('an inbound access rule');

export const NetworkPath = z
  .strictObject({
    target: z
      .string()
      .refine(isPathTarget, {
        error: 'is not a host name (RFC 1123, at most 253 characters) or an IPv4/IPv6 address',
        params: { hint: 'write it like app.example.com or 192.0.2.80' },
      })
      .describe('host name or address the MP measures; one path per (MP, target)'),
    location: z
      .string()
      .min(1)
      .max(200)
      .refine(isLocationText, {
        error: 'holds a line break or a control character',
        params: { hint: 'write the location on one line, as plain text' },
      })
      .optional()
      .describe("the path's targetLocation in the monitoring service, set after creation"),
  })
  .describe('a network path the MP measures; created in the monitoring service when missing, never deleted');

export const MonitoringPoint = z.strictObject({
  name: z.string().min(1).max(100).describe('label used in logs'),
  service_hostname: z
    .string()
    .min(1)
    .max(253)
    .optional()
    .describe("the MP's hostname as the monitoring service knows it (post-check); default its name"),
  url: z.string().describe('https://host[:port] of the device; the Admin API is {url}/api/v1'),
  username: AdminUsername.optional(),
  password: secret.optional(),
  password_file: secretInFile.optional(),
  tls: Tls.optional(),
  allow_disconnect: z.boolean().optional().describe('allow changes to the interface the agent talks through'),
  prune: z.boolean().optional().describe('remove interfaces this file does not mention'),
  interfaces: z.record(z.string(), Interface).optional(),
  acl: z.array(AclRule).optional(),
  paths: z.array(NetworkPath).optional().describe('network paths the MP measures (agent.yaml service block needed)'),
});

export const StickFile = z.strictObject({
  version: z.literal(SUPPORTED_VERSIONS),
  monitoring_points: z.array(MonitoringPoint).min(1),
});

export type StickFile = z.infer<typeof StickFile>;
export type MonitoringPoint = z.infer<typeof MonitoringPoint>;
export type Interface = z.infer<typeof Interface>;
export type Ipv4 = z.infer<typeof Ipv4>;
export type Ipv6 = z.infer<typeof Ipv6>;
export type Dot1x = z.infer<typeof Dot1x>;
export type InnerTls = z.infer<typeof InnerTls>;
export type Wireless = z.infer<typeof Wireless>;
export type AclRule = z.infer<typeof AclRule>;
export type Tls = z.infer<typeof Tls>;
export type NetworkPath = z.infer<typeof NetworkPath>;

/** Every key that holds an inline secret (password, passphrase, private_key_password), from the schema itself. */
export const STICK_SECRET_KEYS = secretKeysOf(StickFile);
/** Every key the stick's schema knows: an unknown key named like a secret is withheld as one. */
export const STICK_KEYS = keysOf(StickFile);

/** JSON Schema of the stick file, for `mpprov schema` and editors' yaml-language-server. */
export function stickJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(StickFile, { target: 'draft-7', unrepresentable: 'any', io: 'input' }),
    $id: 'https://mpprov.invalid/schema/mpprov-v1.json',
    title: 'mpprov stick configuration (mpprov.yaml), version 1',
  };
}
