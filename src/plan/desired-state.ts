import { credentialIdentity, type ValidatedStick } from '../certs/index.js';
import {
  formatKeyPath,
  type Interface,
  type Ipv4,
  type Ipv6,
  ipv4PrefixToNetmask,
  type KeyPath,
  normaliseDeviceUrl,
  parseCidr,
  parsePortRange,
} from '../config/index.js';
import type { AclRule, Family, FileSlot, StanzaSettings, WriteOnlyField } from '../admin-api/index.js';
import type { Secret } from '../core/secret.js';
import { dot1xFacts } from './dot1x-facts.js';
import type { DesiredDevice, DesiredFile, DesiredInterface, DesiredStanza, Dot1xFacts } from './plan-types.js';

/**
 * Translates one validated Monitoring Point entry of a stick into the stanzas, files and ACL rules
 * the device should end up with, in the Admin API's own field names. Pure: no I/O.
 */
export function desiredDevice(stick: ValidatedStick, index: number): DesiredDevice {
  const mp = stick.model?.monitoring_points[index];
  if (mp === undefined) throw new RangeError(`no monitoring point ${index} in a valid stick`);
  const files = new Map<string, DesiredFile>();
  const at: KeyPath = ['monitoring_points', index];
  const interfaces = Object.entries(mp.interfaces ?? {}).map(([name, iface]) =>
    desiredInterface(stick, [...at, 'interfaces', name], name, iface, files),
  );
  return {
    name: mp.name,
    url: normaliseDeviceUrl(mp.url) ?? mp.url,
    interfaces,
    files: [...files.values()],
    acl: mp.acl?.map((rule): AclRule => {
      const ports = parsePortRange(rule.ports) ?? { from: 0, to: 0 };
      return {
        action: 'permit',
        protocol: rule.protocol,
        from_port: ports.from,
        to_port: ports.to,
        source_addresses: rule.sources,
        interfaces: rule.interfaces,
      };
    }),
    prune: mp.prune === true,
    allowDisconnect: mp.allow_disconnect === true,
  };
}

interface Collected {
  fields: StanzaSettings;
  secrets: Partial<Record<WriteOnlyField, Secret>>;
}

function desiredInterface(
  stick: ValidatedStick,
  at: KeyPath,
  name: string,
  iface: Interface,
  files: Map<string, DesiredFile>,
): DesiredInterface {
  const common: Collected = { fields: {}, secrets: {} };

  if (iface.vlan !== undefined) common.fields.vlan_raw_device = iface.vlan.link;
  // One MTU per interface, wherever the stick gives it (the validator holds the places equal).
  const mtu = iface.link?.mtu ?? iface.ipv4?.mtu ?? iface.ipv6?.mtu;
  if (mtu !== undefined) common.fields.mtu = mtu;
  if (iface.link?.speed !== undefined) common.fields.link_speed = iface.link.speed;
  if (iface.link?.duplex !== undefined) common.fields.link_duplex = iface.link.duplex;
  if (iface.link?.autoneg !== undefined) common.fields.link_autoneg = iface.link.autoneg;

  if (iface.wireless !== undefined) {
    common.fields.ssid = iface.wireless.ssid;
    common.fields.security = iface.wireless.security.replace('-', '_');
    // Secrets are Secret in the model, inline or read from their _file.
    const passphrase = iface.wireless.passphrase;
    if (passphrase !== undefined) common.secrets.passphrase = passphrase;
  }

  const dot1x = iface.dot1x;
  if (dot1x !== undefined) {
    const d = [...at, 'dot1x'];
    const f = common.fields;
    f.wpa_key_mgmt = iface.wireless !== undefined ? 'WPA-EAP' : 'IEEE8021X';
    f.wpa_eap = dot1x.eap.toUpperCase();
    f.wpa_identity = dot1x.identity;
    if (dot1x.anonymous_identity !== undefined) f.wpa_anonymous_identity = dot1x.anonymous_identity;
    if (dot1x.eap === 'peap') {
      f.wpa_phase1 = `peapver=${dot1x.peap_version ?? 0}`;
      f.wpa_phase2 = dot1x.inner === 'tls' ? 'auth=TLS' : 'auth=MSCHAPV2';
    }
    const password = dot1x.password;
    if (password !== undefined) common.secrets.wpa_password = password;
    const addFile = (slot: FileSlot, keyPath: KeyPath): void => {
      const content = stick.files.get(formatKeyPath(keyPath));
      if (content === undefined) return;
      const identity = credentialIdentity(content.bytes);
      const filename = `${SLOT_PREFIX[slot]}-${identity.sha256.slice(0, 12)}.${identity.extension}`;
      common.fields[slot] = filename;
      files.set(`${slot}/${filename}`, { slot, filename, bytes: identity.bytes, source: content.name });
    };
    addFile('wpa_ca_cert', [...d, 'ca_cert']);
    addFile('wpa_client_cert', [...d, 'client_cert']);
    addFile('wpa_private_key', [...d, 'private_key']);
    const keyPassword = dot1x.private_key_password;
    if (keyPassword !== undefined) common.secrets.wpa_private_key_passwd = keyPassword;
    if (dot1x.inner_tls !== undefined) {
      const inner = [...d, 'inner_tls'];
      addFile('wpa_ca_cert2', [...inner, 'ca_cert']);
      addFile('wpa_client_cert2', [...inner, 'client_cert']);
      addFile('wpa_private_key2', [...inner, 'private_key']);
      const innerPassword = dot1x.inner_tls.private_key_password;
      if (innerPassword !== undefined) common.secrets.wpa_private_key2_passwd = innerPassword;
    }
  }

  const stanzas: DesiredStanza[] = [];
  const facts = dot1xFacts(stick, at, iface);
  if (iface.ipv4 !== undefined) stanzas.push(stanza(name, 'inet', iface.ipv4, common, facts));
  if (iface.ipv6 !== undefined) stanzas.push(stanza(name, 'inet6', iface.ipv6, common, facts));
  return {
    name,
    ...(iface.vlan === undefined ? {} : { vlanParent: iface.vlan.link }),
    wireless: iface.wireless !== undefined,
    stanzas,
  };
}

function stanza(
  name: string,
  family: Family,
  // eslint-disable-next-line @typescript-eslint/no-duplicate-type-constituents -- one shape in the config schema today; both named so the parameter says what it takes
  block: Ipv4 | Ipv6,
  common: Collected,
  dot1x: Dot1xFacts | undefined,
): DesiredStanza {
  const fields: StanzaSettings = { method: block.method };
  if (block.method === 'static' && block.address !== undefined) {
    const cidr = parseCidr(block.address);
    if (cidr !== undefined) {
      fields.address = cidr.address;
      fields.netmask = family === 'inet' ? ipv4PrefixToNetmask(cidr.prefix) : String(cidr.prefix);
    }
    if (block.gateway !== undefined) fields.gateway = block.gateway;
  }
  if (block.nameservers !== undefined) fields.dns_nameservers = block.nameservers;
  if (block.search !== undefined) fields.dns_search = block.search;
  if (block.routes !== undefined) {
    fields.routes = block.routes.map((r) => ({
      destination: r.to,
      gateway: r.via,
      ...(r.metric === undefined ? {} : { metric: r.metric }),
    }));
  }
  // Interface-level fields go into both families' stanzas alike: the device copies the last posted
  // stanza's into the other one (docs/device-model.md), so both must say the same.
  return {
    name,
    family,
    fields: { ...fields, ...common.fields },
    secrets: { ...common.secrets },
    ...(dot1x === undefined ? {} : { dot1x }),
  };
}

/**
 * `ca-<first 12 hex of the content's sha256>.pem`: the same certificate or key, however its file
 * spells it (certs/credential-identity.ts), always gets the same name on the device.
 */
const SLOT_PREFIX: Record<FileSlot, string> = {
  wpa_ca_cert: 'ca',
  wpa_client_cert: 'client',
  wpa_private_key: 'key',
  wpa_ca_cert2: 'ca2',
  wpa_client_cert2: 'client2',
  wpa_private_key2: 'key2',
};
