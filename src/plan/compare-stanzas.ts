import {
  isViewOnlyField,
  isWriteOnlyField,
  setMarker,
  type Stanza,
  StanzaSettings,
  WRITE_ONLY_FIELDS,
} from '../admin-api/index.js';
import { canonicalIp, parseCidr, ipv4PrefixToNetmask } from '../config/index.js';
import type { DesiredStanza, FieldChange, SecretKnown } from './plan-types.js';
import { byCodeUnit } from '../core/index.js';

/**
 * Compares what the stick wants with what the device reports, field by field, after normalising
 * both (address spellings, netmask forms, route order), so that an unchanged configuration is seen
 * as unchanged and never causes a networking restart.
 */

export function compareStanza(
  desired: DesiredStanza | undefined,
  actual: Stanza | null | undefined,
  secretKnown: SecretKnown,
): FieldChange[] {
  const changes: FieldChange[] = [];
  const wanted = desired === undefined ? {} : normaliseFields(desired.fields);
  const have = actual == null ? {} : normaliseFields(knownSettings(configFields(actual)));
  for (const field of new Set([...Object.keys(wanted), ...Object.keys(have)])) {
    const from = have[field];
    const to = wanted[field];
    if (JSON.stringify(from) !== JSON.stringify(to)) changes.push({ field, from, to, secret: false });
  }
  for (const field of WRITE_ONLY_FIELDS) {
    const value = desired?.secrets[field];
    const isSet = actual != null && actual[setMarker(field)] === true;
    if (value === undefined) {
      if (isSet) changes.push({ field, from: 'set', to: undefined, secret: true });
      continue;
    }
    // Without a matching record the secret is sent again: it may have changed on the device.
    if (!isSet || !secretKnown(field, value))
      changes.push({ field, from: isSet ? 'set' : undefined, to: 'set', secret: true });
  }
  return changes;
}

const SETTINGS = new Set(Object.keys(StanzaSettings.shape));

/**
 * Fields a device adds that the model does not name (a vendor's own, a rehearsal aid) are
 * tolerated and never judged: neither a change to make nor a difference after a restart. They
 * stay in configFields, so a restore re-posts them as the device had them.
 */
function knownSettings(fields: Stanza): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([field]) => SETTINGS.has(field)));
}

/** Whether the device reports a value in any write-only field of this stanza (it never returns the value). */
export function holdsSecrets(stanza: Stanza): boolean {
  return WRITE_ONLY_FIELDS.some((field) => stanza[setMarker(field)] === true);
}

/**
 * The settings of a device stanza: no view-only fields, no write-only fields, no `_set` markers.
 * Fields the device adds that this agent does not know are kept: re-posting a stanza (a restore,
 * a roll-back) must not drop them.
 */
export function configFields(stanza: Stanza): Stanza {
  // Keys and values come from a parsed Stanza, so writing them back through its index signature keeps them valid.
  const out: Stanza = {};
  for (const [field, value] of Object.entries(stanza)) {
    if (
      isViewOnlyField(field) ||
      field.endsWith('_set') ||
      isWriteOnlyField(field) ||
      value === null ||
      value === undefined
    )
      continue;
    out[field] = value;
  }
  return out;
}

export function normaliseFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const isInet = typeof fields.address === 'string' ? !fields.address.includes(':') : true;
  for (const [field, value] of Object.entries(fields)) {
    const normal = normaliseField(field, value, isInet);
    // An empty list and an absent list configure the same thing.
    if (Array.isArray(normal) && normal.length === 0) continue;
    out[field] = normal;
  }
  return out;
}

function normaliseField(field: string, value: unknown, isInet: boolean): unknown {
  switch (field) {
    case 'address':
    case 'gateway':
      return typeof value === 'string' ? canonicalIp(value) : value;
    case 'netmask':
      return normaliseNetmask(value, isInet);
    case 'dns_nameservers':
      // Order is the resolver's preference: it matters and is kept.
      return Array.isArray(value) ? value.map((v) => canonicalIp(String(v))) : value;
    case 'dns_search':
      return Array.isArray(value) ? value.map((v) => String(v).toLowerCase().replace(/\.$/, '')) : value;
    case 'routes':
      return Array.isArray(value) ? normaliseRoutes(value) : value;
    case 'mtu':
    case 'link_speed':
      return typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
    case 'link_autoneg':
      return value === 'true' ? true : value === 'false' ? false : value;
    default:
      return value;
  }
}

function normaliseNetmask(value: unknown, isInet: boolean): unknown {
  const text = String(value).replace(/^\//, '');
  if (isInet && /^\d{1,2}$/.test(text)) return ipv4PrefixToNetmask(Number(text));
  return text;
}

/** Routes are a set: order does not matter to the kernel's routing table. */
function normaliseRoutes(routes: unknown[]): unknown[] {
  return routes
    .map((route) => {
      const r: Record<string, unknown> = typeof route === 'object' && route !== null ? { ...route } : {};
      const cidr = typeof r.destination === 'string' ? parseCidr(r.destination) : undefined;
      return {
        destination: cidr === undefined ? r.destination : `${canonicalIp(cidr.address)}/${cidr.prefix}`,
        gateway: typeof r.gateway === 'string' ? canonicalIp(r.gateway) : r.gateway,
        ...(r.metric === undefined || r.metric === null ? {} : { metric: Number(r.metric) }),
      };
    })
    .sort((a, b) => byCodeUnit(JSON.stringify(a), JSON.stringify(b)));
}
