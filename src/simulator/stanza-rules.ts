import {
  familyLabel,
  isAddressOfFamily,
  isCidrOfFamily,
  isDomainName,
  isIpAddress,
  isNetmaskOfFamily,
} from './address-syntax.js';
import { interfaceKind, type DeviceModel, type InterfaceKind } from './device-model.js';
import { FileKind } from './file-kind.js';
import {
  FAMILIES,
  FILE_SLOTS,
  WPA_FIELDS,
  hasDot1x,
  type Family,
  type FileSlot,
  type Stanza,
  type StanzaField,
} from './stanza.js';

/**
 * The rules of docs/device-model.md that need the device: which interfaces exist, what the ports
 * can do, which files are loaded, what the other stanzas say. Pure: the caller passes the device
 * as a RuleContext. Each rule returns the 400 sentence, naming the field, or undefined.
 */
export interface RuleContext {
  model: DeviceModel;
  /** What the next restart makes active (null: marked for removal; undefined: none). */
  pendingView(name: string, family: Family): Stanza | null | undefined;
  /** Interfaces with a stanza in the pending view (removals included). */
  pendingInterfaces(): string[];
  /** Kind of the file loaded in that slot under that name, or undefined if none is. */
  loadedFileKind(slot: FileSlot, fileName: string): FileKind | undefined;
}

type Rule = (stanza: Stanza, kind: InterfaceKind, ctx: RuleContext) => string | undefined;

export function checkStanza(stanza: Stanza, ctx: RuleContext): string | undefined {
  const kind = interfaceKind(ctx.model, stanza.name);
  const bridgeVlan = BRIDGE_VLAN.exec(stanza.name);
  if (kind === undefined && bridgeVlan !== null) {
    // Named for what it is (a VLAN on the bridge), not as an unknown interface.
    return notWiredParent(stanza.name, bridgeVlan[1] ?? '', 'a bridge');
  }
  if (kind === undefined) {
    const names = Object.keys(ctx.model.interfaces).join(', ');
    return `Field "name" must be an interface of this device (${names}), a VLAN <parent>.<id> of one, or bridge1; "${stanza.name}" is none of these.`;
  }
  const rules: Rule[] = [
    vlanId,
    addressing,
    addresses,
    transmission,
    vlanParent,
    wireless,
    dot1x,
    files,
    dot1xNeeds,
    vlanDot1x,
  ];
  for (const rule of rules) {
    const error = rule(stanza, kind, ctx);
    if (error !== undefined) return error;
  }
  return undefined;
}

const vlanId: Rule = (_s, kind) =>
  kind.kind === 'vlan' && (kind.id < 1 || kind.id > 4094)
    ? `Field "name" has VLAN id ${kind.id}; a VLAN id is 1 to 4094.`
    : undefined;

const addressing: Rule = (s) => {
  if (s.method === 'auto' && s.family === 'inet') return 'Field "method" "auto" (SLAAC) is only for family "inet6".';
  // Addresses belong to static only: with dhcp and auto they come from the network, with manual
  // the link is up without any.
  if (s.method === 'dhcp' || s.method === 'auto' || s.method === 'manual') {
    for (const field of ['address', 'netmask', 'gateway'] as const) {
      if (s[field] !== undefined) return `Field "${field}" is not allowed with method "${s.method}".`;
    }
  }
  if (s.method === 'static') {
    if (s.address === undefined) return 'Field "address" is required with method "static".';
    if (s.netmask === undefined) return 'Field "netmask" is required with method "static".';
  }
  return undefined;
};

const addresses: Rule = (s) => {
  const ip = `an ${familyLabel(s.family)} address for family "${s.family}"`;
  if (s.address !== undefined && !isAddressOfFamily(s.address, s.family)) return `Field "address" must be ${ip}.`;
  if (s.netmask !== undefined && !isNetmaskOfFamily(s.netmask, s.family)) {
    return s.family === 'inet'
      ? 'Field "netmask" must be a dotted IPv4 netmask such as "255.255.255.0" for family "inet".'
      : 'Field "netmask" must be a prefix length from 0 to 128 such as "64" for family "inet6".';
  }
  if (s.gateway !== undefined && !isAddressOfFamily(s.gateway, s.family)) return `Field "gateway" must be ${ip}.`;
  const badServer = (s.dns_nameservers ?? []).findIndex((a) => !isIpAddress(a));
  if (badServer >= 0) return `Field "dns_nameservers[${badServer}]" must be an IP address.`;
  const badDomain = (s.dns_search ?? []).findIndex((d) => !isDomainName(d));
  if (badDomain >= 0) return `Field "dns_search[${badDomain}]" must be a domain name.`;
  const example = s.family === 'inet' ? '10.0.0.0/8' : '2001:db8::/32';
  for (const [i, route] of (s.routes ?? []).entries()) {
    if (!isCidrOfFamily(route.destination, s.family)) {
      return `Field "routes[${i}].destination" must be an ${familyLabel(s.family)} CIDR such as "${example}" for family "${s.family}".`;
    }
    if (!isAddressOfFamily(route.gateway, s.family)) return `Field "routes[${i}].gateway" must be ${ip}.`;
  }
  return undefined;
};

const LINK_FIELDS = ['link_speed', 'link_duplex', 'link_autoneg'] as const;

const transmission: Rule = (s, kind) => {
  const given = LINK_FIELDS.find((f) => s[f] !== undefined);
  if (given === undefined) return undefined;
  if (kind.kind !== 'wired') {
    return `Field "${given}" does not fit interface "${s.name}": only wired physical interfaces have transmission parameters (GET /appliance/capability).`;
  }
  const port = kind.port;
  if (s.link_speed !== undefined && !port.speeds.includes(s.link_speed)) {
    return `Field "link_speed" must be one of ${port.speeds.join(', ')} on interface "${s.name}" (GET /appliance/capability).`;
  }
  if (s.link_duplex !== undefined && !port.duplex.includes(s.link_duplex)) {
    return `Field "link_duplex" must be one of ${port.duplex.join(', ')} on interface "${s.name}" (GET /appliance/capability).`;
  }
  if (s.link_autoneg === true && !port.autoneg) {
    return `Field "link_autoneg" cannot be true: interface "${s.name}" does not auto-negotiate (GET /appliance/capability).`;
  }
  if (s.link_speed !== undefined && s.link_autoneg !== false) {
    return 'Field "link_autoneg" must be false when "link_speed" fixes the speed.';
  }
  return undefined;
};

const BRIDGE_VLAN = /^(bridge1)\.\d{1,5}$/;

const notWiredParent = (vlan: string, parent: string, what: string) =>
  `Field "vlan_raw_device" must be a wired physical interface (ethN); VLAN "${vlan}" would sit on "${parent}", which is ${what}.`;

const vlanParent: Rule = (s, kind, ctx) => {
  if (kind.kind !== 'vlan') {
    return s.vlan_raw_device !== undefined
      ? 'Field "vlan_raw_device" is only for VLAN interfaces such as "eth0.100".'
      : undefined;
  }
  if (ctx.model.interfaces[kind.parent]?.kind !== 'wired') return notWiredParent(s.name, kind.parent, 'wireless');
  if (s.vlan_raw_device === undefined) return `Field "vlan_raw_device" is required for VLAN interface "${s.name}".`;
  if (s.vlan_raw_device !== kind.parent)
    return `Field "vlan_raw_device" must be "${kind.parent}", the parent of "${s.name}".`;
  return undefined;
};

const PASSPHRASE = /^(?:[\x20-\x7e]{8,63}|[0-9A-Fa-f]{64})$/;

const wireless: Rule = (s, kind) => {
  if (kind.kind !== 'wireless') {
    const field = (['ssid', 'security', 'passphrase'] as const).find((f) => s[f] !== undefined);
    return field !== undefined ? `Field "${field}" is only for wireless interfaces.` : undefined;
  }
  if (s.ssid === undefined) return `Field "ssid" is required for wireless interface "${s.name}".`;
  const ssidBytes = Buffer.byteLength(s.ssid, 'utf8');
  if (ssidBytes < 1 || ssidBytes > 32) return 'Field "ssid" must be 1 to 32 bytes.';
  if (s.security === undefined) return `Field "security" is required for wireless interface "${s.name}".`;
  if (s.passphrase !== undefined && s.security !== 'wpa2_personal')
    return 'Field "passphrase" is only for security "wpa2_personal".';
  if (s.security === 'wpa2_personal') {
    if (s.passphrase === undefined) return 'Field "passphrase" is required with security "wpa2_personal".';
    if (!PASSPHRASE.test(s.passphrase))
      return 'Field "passphrase" must be 8 to 63 printable ASCII characters or 64 hex digits.';
  }
  if (s.security === 'wpa2_enterprise') {
    if (s.wpa_key_mgmt !== 'WPA-EAP') return 'Field "wpa_key_mgmt" must be "WPA-EAP" with security "wpa2_enterprise".';
  } else {
    const wpa = firstGiven(s, WPA_FIELDS);
    if (wpa !== undefined) return `Field "${wpa}" is only for security "wpa2_enterprise".`;
  }
  return undefined;
};

/** Fields each EAP type takes besides wpa_key_mgmt and wpa_eap. */
const FITS: Record<'PEAP' | 'TLS' | 'MD5', readonly StanzaField[]> = {
  TLS: [
    'wpa_identity',
    'wpa_anonymous_identity',
    'wpa_ca_cert',
    'wpa_client_cert',
    'wpa_private_key',
    'wpa_private_key_passwd',
  ],
  MD5: ['wpa_identity', 'wpa_password'],
  PEAP: [
    'wpa_identity',
    'wpa_anonymous_identity',
    'wpa_password',
    'wpa_phase1',
    'wpa_phase2',
    'wpa_ca_cert',
    'wpa_ca_cert2',
    'wpa_client_cert2',
    'wpa_private_key2',
    'wpa_private_key2_passwd',
  ],
};
const SECOND_SET = ['wpa_ca_cert2', 'wpa_client_cert2', 'wpa_private_key2', 'wpa_private_key2_passwd'] as const;

const dot1x: Rule = (s, kind) => {
  const wpa = firstGiven(s, WPA_FIELDS);
  if (wpa === undefined) return undefined;
  if (s.wpa_key_mgmt === undefined)
    return `Field "wpa_key_mgmt" is required when 802.1X fields such as "${wpa}" are given.`;
  if (kind.kind !== 'wireless' && s.wpa_key_mgmt !== 'IEEE8021X') {
    return `Field "wpa_key_mgmt" must be "IEEE8021X" on interface "${s.name}"; "WPA-EAP" is for wireless.`;
  }
  const eap = s.wpa_eap;
  if (eap === undefined) return 'Field "wpa_eap" is required with "wpa_key_mgmt".';
  if (eap === 'MD5' && kind.kind === 'wireless') return 'Field "wpa_eap" "MD5" is refused on a wireless interface.';
  if (s.wpa_identity === undefined) return `Field "wpa_identity" is required with EAP type "${eap}".`;
  if (eap === 'PEAP' && s.wpa_phase2 === undefined) return 'Field "wpa_phase2" is required with EAP type "PEAP".';
  for (const field of WPA_FIELDS) {
    if (field === 'wpa_key_mgmt' || field === 'wpa_eap' || s[field] === undefined) continue;
    if (!FITS[eap].includes(field)) {
      return eap === 'PEAP' && ['wpa_client_cert', 'wpa_private_key', 'wpa_private_key_passwd'].includes(field)
        ? `Field "${field}" does not fit EAP type "PEAP"; PEAP with "auth=TLS" takes the second set (wpa_ca_cert2, wpa_client_cert2, wpa_private_key2).`
        : `Field "${field}" does not fit EAP type "${eap}".`;
    }
  }
  if (eap === 'PEAP' && s.wpa_phase2 === 'auth=TLS' && s.wpa_password !== undefined) {
    return 'Field "wpa_password" does not fit PEAP with "wpa_phase2": "auth=TLS".';
  }
  const second = firstGiven(s, SECOND_SET);
  if (eap === 'PEAP' && s.wpa_phase2 !== 'auth=TLS' && second !== undefined) {
    return `Field "${second}" does not fit PEAP with "wpa_phase2": "${s.wpa_phase2}"; the second set is for "auth=TLS".`;
  }
  if (s.wpa_private_key_passwd !== undefined && s.wpa_private_key === undefined) {
    return 'Field "wpa_private_key_passwd" needs "wpa_private_key".';
  }
  if (s.wpa_private_key2_passwd !== undefined && s.wpa_private_key2 === undefined) {
    return 'Field "wpa_private_key2_passwd" needs "wpa_private_key2".';
  }
  return undefined;
};

const files: Rule = (s, _kind, ctx) => {
  for (const slot of FILE_SLOTS) {
    const fileName = s[slot];
    if (fileName !== undefined && ctx.loadedFileKind(slot, fileName) === undefined) {
      return `Field "${slot}" names file "${fileName}", which is not loaded in slot "${slot}"; upload it with POST /interface/file/ first.`;
    }
  }
  return undefined;
};

const dot1xNeeds: Rule = (s, _kind, ctx) => {
  const isPfx = (slot: FileSlot, name: string | undefined) =>
    name !== undefined && ctx.loadedFileKind(slot, name) === FileKind.Pfx;
  const needs = (field: StanzaField, context: string) =>
    s[field] === undefined ? `Field "${field}" is required with ${context}.` : undefined;
  switch (s.wpa_eap) {
    case 'TLS':
      return (
        needs('wpa_ca_cert', 'EAP type "TLS"') ??
        needs('wpa_private_key', 'EAP type "TLS"') ??
        (isPfx('wpa_private_key', s.wpa_private_key)
          ? undefined
          : needs('wpa_client_cert', 'EAP type "TLS" unless "wpa_private_key" is a PFX file'))
      );
    case 'MD5':
      return needs('wpa_password', 'EAP type "MD5"');
    case 'PEAP':
      if (s.wpa_phase2 === 'auth=MSCHAPV2') return needs('wpa_password', 'PEAP and "auth=MSCHAPV2"');
      return (
        needs('wpa_ca_cert2', 'PEAP and "auth=TLS"') ??
        needs('wpa_private_key2', 'PEAP and "auth=TLS"') ??
        (isPfx('wpa_private_key2', s.wpa_private_key2)
          ? undefined
          : needs('wpa_client_cert2', 'PEAP and "auth=TLS" unless "wpa_private_key2" is a PFX file'))
      );
    default:
      return undefined;
  }
};

/** The documented restriction: a VLAN's 802.1X needs its parent configured dhcp or static with 802.1X. */
function parentAllowsVlanDot1x(parent: string, ctx: RuleContext): boolean {
  return FAMILIES.some((family) => {
    const stanza = ctx.pendingView(parent, family);
    return stanza != null && (stanza.method === 'dhcp' || stanza.method === 'static') && hasDot1x(stanza);
  });
}

const vlanDot1x: Rule = (s, kind, ctx) => {
  if (kind.kind !== 'vlan' || !hasDot1x(s)) return undefined;
  return parentAllowsVlanDot1x(kind.parent, ctx)
    ? undefined
    : `Field "wpa_key_mgmt": VLAN "${s.name}" may use 802.1X only if its vlan_raw_device "${kind.parent}" is configured dhcp or static with 802.1X (judged on the pending configuration).`;
};

/**
 * The same restriction the other way round: `ctx` is the pending view as a POST or DELETE of a
 * stanza of `parent` would leave it. Refused (naming the VLANs) when a pending VLAN stanza with
 * 802.1X on `parent` would be left on a parent without it; the client turns the VLAN's 802.1X off,
 * or deletes the VLAN, first.
 */
export function checkVlansOnParent(parent: string, request: string, ctx: RuleContext): string | undefined {
  const vlans = ctx.pendingInterfaces().filter((name) => {
    const kind = interfaceKind(ctx.model, name);
    return (
      kind?.kind === 'vlan' &&
      kind.parent === parent &&
      FAMILIES.some((f) => {
        const stanza = ctx.pendingView(name, f);
        return stanza != null && hasDot1x(stanza);
      })
    );
  });
  if (vlans.length === 0 || parentAllowsVlanDot1x(parent, ctx)) return undefined;
  const named = vlans.map((v) => `"${v}"`).join(', ');
  const subject = vlans.length === 1 ? `VLAN ${named} has` : `VLANs ${named} have`;
  return `${subject} 802.1X in the pending configuration, and a VLAN may use 802.1X only if its vlan_raw_device "${parent}" is configured dhcp or static with 802.1X; this ${request} would leave "${parent}" without it: turn off the 802.1X of ${named}, or delete ${vlans.length === 1 ? 'it' : 'them'}, first.`;
}

function firstGiven<F extends StanzaField>(s: Stanza, fields: readonly F[]): F | undefined {
  return fields.find((f) => s[f] !== undefined);
}
