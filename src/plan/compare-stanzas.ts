import { canonicalIp, parseCidr, type Secret, ipv4PrefixToNetmask } from '../config/index.js';
import { type DesiredStanza, type DeviceStanza, SECRET_FIELDS, type SecretField, VIEW_ONLY_FIELDS } from './stanza.js';

/**
 * Compares what the stick wants with what the device reports, field by field, after normalising
 * both (address spellings, netmask forms, route order), so that an unchanged configuration is seen
 * as unchanged and never causes a networking restart.
 */

export interface FieldChange {
  field: string;
  /** Normalised old and new values; for secrets only whether they were or will be set. */
  from: unknown;
  to: unknown;
  secret: boolean;
}

/** Tells whether a secret equals what the agent last applied to this stanza (secrets cannot be read back). */
export type SecretKnown = (field: SecretField, value: Secret) => boolean;

export function compareStanza(
  desired: DesiredStanza | undefined,
  actual: DeviceStanza | null | undefined,
  secretKnown: SecretKnown,
): FieldChange[] {
  const changes: FieldChange[] = [];
  const wanted = desired === undefined ? {} : normaliseFields(desired.fields);
  const have = actual == null ? {} : normaliseFields(configFields(actual));
  for (const field of new Set([...Object.keys(wanted), ...Object.keys(have)])) {
    const from = have[field];
    const to = wanted[field];
    if (JSON.stringify(from) !== JSON.stringify(to)) changes.push({ field, from, to, secret: false });
  }
  for (const field of SECRET_FIELDS) {
    const value = desired?.secrets[field];
    const isSet = actual != null && actual[`${field}_set`] === true;
    if (value === undefined) {
      if (isSet) changes.push({ field, from: 'set', to: undefined, secret: true });
      continue;
    }
    // Without a matching record the secret is sent again: it may have changed on the device.
    if (!isSet || !secretKnown(field, value)) changes.push({ field, from: isSet ? 'set' : undefined, to: 'set', secret: true });
  }
  return changes;
}

/** The configuration fields of a device stanza: no view-only fields, no `<secret>_set` markers. */
export function configFields(stanza: DeviceStanza): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(stanza)) {
    if (VIEW_ONLY_FIELDS.has(field) || field.endsWith('_set') || value === null || value === undefined) continue;
    if ((SECRET_FIELDS as readonly string[]).includes(field)) continue;
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
      const r = route as { destination?: unknown; gateway?: unknown; metric?: unknown };
      const cidr = typeof r.destination === 'string' ? parseCidr(r.destination) : undefined;
      return {
        destination: cidr === undefined ? r.destination : `${canonicalIp(cidr.address)}/${cidr.prefix}`,
        gateway: typeof r.gateway === 'string' ? canonicalIp(r.gateway) : r.gateway,
        ...(r.metric === undefined || r.metric === null ? {} : { metric: Number(r.metric) }),
      };
    })
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}
