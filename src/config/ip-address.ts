import { isIPv4, isIPv6 } from 'node:net';

/** IPv4/IPv6 parsing for validation: family, prefixes and subnet membership. */

export type IpFamily = 4 | 6;

export interface Cidr {
  address: string;
  family: IpFamily;
  prefix: number;
}

export function ipFamily(text: string): IpFamily | undefined {
  if (isIPv4(text)) return 4;
  if (isIPv6(text)) return 6;
  return undefined;
}

/** Parses `addr/prefix`; `undefined` when the text is not a valid CIDR. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const address = text.slice(0, slash);
  const prefixText = text.slice(slash + 1);
  const family = ipFamily(address);
  if (family === undefined || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > (family === 4 ? 32 : 128)) return undefined;
  return { address, family, prefix };
}

/** The address as a big integer, for prefix arithmetic. */
function ipToBigInt(address: string): bigint {
  if (isIPv4(address)) {
    return address.split('.').reduce((acc, part) => (acc << 8n) + BigInt(Number(part)), 0n);
  }
  return ipv6Groups(address).reduce((acc, group) => (acc << 16n) + BigInt(group), 0n);
}

function ipv6Groups(address: string): number[] {
  let text = address;
  // An embedded IPv4 tail (::ffff:192.0.2.1) becomes two hex groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1] !== undefined) {
    const n = Number(ipToBigInt(v4[1]));
    text = text.slice(0, -v4[1].length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? [] : new Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...fill, ...tailGroups].map((g) => parseInt(g, 16));
}

export function sameSubnet(a: string, b: string, prefix: number): boolean {
  const family = ipFamily(a);
  if (family === undefined || family !== ipFamily(b)) return false;
  const bits = BigInt(family === 4 ? 32 : 128);
  const shift = bits - BigInt(prefix);
  return ipToBigInt(a) >> shift === ipToBigInt(b) >> shift;
}

/** True when host bits are set in `addr/prefix` (a route destination must be a network). */
export function hasHostBits(cidr: Cidr): boolean {
  const bits = BigInt(cidr.family === 4 ? 32 : 128);
  const hostMask = (1n << (bits - BigInt(cidr.prefix))) - 1n;
  return (ipToBigInt(cidr.address) & hostMask) !== 0n;
}

export function ipv4PrefixToNetmask(prefix: number): string {
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return [24, 16, 8, 0].map((s) => (mask >>> s) & 0xff).join('.');
}

/** Canonical text of an address, so `2001:DB8::0:1` and `2001:db8::1` compare equal. */
export function canonicalIp(address: string): string {
  if (isIPv4(address))
    return address
      .split('.')
      .map((p) => String(Number(p)))
      .join('.');
  if (!isIPv6(address)) return address;
  const groups = ipv6Groups(address).map((g) => g.toString(16));
  // RFC 5952: compress the longest run (>= 2) of zero groups.
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (bestStart < 0) return groups.join(':');
  return `${groups.slice(0, bestStart).join(':')}::${groups.slice(bestStart + bestLen).join(':')}`;
}

const HOSTNAME_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

export function isDomainName(text: string): boolean {
  if (text.length === 0 || text.length > 253) return false;
  return text
    .replace(/\.$/, '')
    .split('.')
    .every((label) => HOSTNAME_LABEL.test(label));
}

/**
 * Why `addr/prefix` cannot be an interface's own address, or undefined when it can: the network
 * or broadcast address of its IPv4 subnet (except /31 and /32, RFC 3021), the IPv6 subnet-router
 * anycast address (all host bits zero), multicast, loopback, unspecified or reserved addresses.
 */
export function notAHostAddress(cidr: Cidr): { message: string; hint: string } | undefined {
  const value = ipToBigInt(cidr.address);
  const bits = cidr.family === 4 ? 32n : 128n;
  const inRange = (base: bigint, prefix: bigint): boolean => value >> (bits - prefix) === base >> (bits - prefix);
  const pick = 'use an address of a host inside the subnet';
  if (value === 0n) return { message: `${cidr.address} is the unspecified address, not a host's`, hint: pick };
  if (cidr.family === 4) {
    if (inRange(0x7f000000n, 8n)) return { message: `${cidr.address} is a loopback address`, hint: pick };
    if (inRange(0xe0000000n, 4n)) return { message: `${cidr.address} is a multicast address`, hint: pick };
    if (inRange(0xf0000000n, 4n))
      return { message: `${cidr.address} is a reserved address (240.0.0.0/4), not usable on an interface`, hint: pick };
    if (cidr.prefix <= 30) {
      const hostMask = (1n << (bits - BigInt(cidr.prefix))) - 1n;
      if ((value & hostMask) === 0n)
        return {
          message: `${cidr.address} is the network address of ${cidr.address}/${cidr.prefix}, not a host's`,
          hint: `${pick}, e.g. the next one up, or correct the prefix length`,
        };
      if ((value & hostMask) === hostMask)
        return {
          message: `${cidr.address} is the broadcast address of its /${cidr.prefix} subnet, not a host's`,
          hint: `${pick}, or correct the prefix length`,
        };
    }
    return undefined;
  }
  if (value === 1n) return { message: `${cidr.address} is the loopback address`, hint: pick };
  if (inRange(0xffn << 120n, 8n)) return { message: `${cidr.address} is a multicast address`, hint: pick };
  if (cidr.prefix <= 126 && !hasHostBits(cidr)) {
    return {
      message: `${cidr.address} is the subnet-router anycast address of its /${cidr.prefix} (all host bits zero), which routers answer: not a host's`,
      hint: `${pick}, or correct the prefix length`,
    };
  }
  return undefined;
}
