import { isIP } from 'node:net';
import { hostAddress } from '../core/host-address.js';

/**
 * Who a device URL names, whatever its spelling: the host's addresses (a name such as `localhost`
 * resolved with the system resolver, as the connection itself would be; every IPv4-in-IPv6
 * spelling as the IPv4 address, core/host-address.ts) and the port (443 when the URL gives none).
 * The lockout guard matches these addresses against the device's own; the per-device lock and the
 * secrets record are keyed by them, so `https://127.0.0.1:P`, `https://localhost:P` and
 * `https://[::ffff:127.0.0.1]:P` are one device.
 */

export interface DeviceIdentity {
  /** The URL this identity was resolved from, as the stick wrote it (normalised). */
  url: string;
  /** Canonical textual addresses (IPv6 lower-case, no brackets), sorted; empty when the name does not resolve. */
  addresses: string[];
  port: number;
}

export async function resolveDeviceIdentity(url: string): Promise<DeviceIdentity> {
  const literal = literalDeviceIdentity(url);
  if (literal.addresses.length > 0) return literal;
  const host = new URL(url).hostname;
  try {
    // lookup() is what the connection uses (getaddrinfo, /etc/hosts first), not a DNS query of our
    // own. Loaded here, for a name only: node:dns/promises starts c-ares when it loads (resolv.conf
    // and nsswitch.conf read, 0.5-0.9 ms of every apply), and a device URL is mostly an address.
    const { lookup } = process.getBuiltinModule('node:dns/promises');
    const found = await lookup(host, { all: true, verbatim: true });
    return { ...literal, addresses: [...new Set(found.map((a) => hostAddress(a.address)))].sort() };
  } catch {
    // Unresolvable now: the connection will fail and say so; nothing here to match.
    return literal;
  }
}

/**
 * The identity a URL gives without asking any resolver: its address when the host is an IP
 * literal, else none (the name is then known by its spelling only).
 */
export function literalDeviceIdentity(url: string): DeviceIdentity {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const port = parsed.port === '' ? 443 : Number(parsed.port);
  return { url, addresses: isIP(host) === 0 ? [] : [hostAddress(host)], port };
}

/**
 * The keys of one device: `https://ADDRESS[:PORT]` (the port left out when 443, an IPv6 address in
 * brackets) for each of its addresses. Two spellings of one device share at least one key; a name
 * that does not resolve keys by its own spelling. The pinned fingerprint is deliberately not part
 * of the key: two sticks pinning different certificates for one address and port still reach one
 * device, and a key that told them apart would let them run at once. A key is a URL so that a
 * secrets record entry of a device written by its address keeps the key it always had.
 */
export function deviceKeys(identity: DeviceIdentity): string[] {
  const port = identity.port === 443 ? '' : `:${identity.port}`;
  if (identity.addresses.length === 0) return [`https://${new URL(identity.url).host.toLowerCase()}`];
  return identity.addresses.map((address) => `https://${address.includes(':') ? `[${address}]` : address}${port}`);
}

/** The per-device lock's keys (deviceKeys). */
export function deviceLockKeys(url: string, identity: DeviceIdentity): string[] {
  return deviceKeys({ ...identity, url });
}
