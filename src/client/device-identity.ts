import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/**
 * Who a device URL names, whatever its spelling: the host's addresses (a name such as `localhost`
 * resolved with the system resolver, as the connection itself would be) and the port. The lockout
 * guard matches these addresses against the device's own; the per-device lock is keyed by them,
 * so `https://127.0.0.1:P` and `https://localhost:P` are one device.
 */

export interface DeviceIdentity {
  /** Canonical textual addresses (IPv6 lower-case, no brackets), sorted; empty when the name does not resolve. */
  addresses: string[];
  port: number;
}

export async function resolveDeviceIdentity(url: string): Promise<DeviceIdentity> {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const port = parsed.port === '' ? 443 : Number(parsed.port);
  if (isIP(host) !== 0) return { addresses: [canonical(host)], port };
  try {
    const found = await lookup(host, { all: true, verbatim: true });
    return { addresses: [...new Set(found.map((a) => canonical(a.address)))].sort(), port };
  } catch {
    // Unresolvable now: the connection will fail and say so; nothing here to match.
    return { addresses: [], port };
  }
}

/**
 * The lock keys of one device: `address port` for each of its addresses. Two spellings of one
 * device share at least one key; a name that does not resolve keys by its own spelling. The pinned
 * fingerprint is deliberately not part of the key: two sticks pinning different certificates for
 * one address and port still reach one device, and a key that told them apart would let them run
 * at once.
 */
export function deviceLockKeys(url: string, identity: DeviceIdentity): string[] {
  if (identity.addresses.length === 0) return [new URL(url).host.toLowerCase()];
  return identity.addresses.map((address) => `${address} ${identity.port}`);
}

function canonical(address: string): string {
  const lower = address.toLowerCase();
  // ::ffff:127.0.0.1 is 127.0.0.1.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  return mapped?.[1] ?? lower;
}
