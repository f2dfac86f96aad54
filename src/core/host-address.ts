import { isIPv4, isIPv6 } from 'node:net';

/**
 * The one text of an IP address as a host on the network: IPv4 in dotted decimal, IPv6 lower-case
 * and zero-compressed (RFC 5952), and every IPv4-in-IPv6 spelling (`::ffff:127.0.0.1`,
 * `::FFFF:7f00:1`, the deprecated compatible `::127.0.0.1`) as the IPv4 address it carries, because
 * a connection to any of them reaches that IPv4 host. The device identity and the lockout guard
 * both compare hosts through this, so a spelling cannot make one device look like two. Text that
 * is no IP address comes back unchanged. (Not config's canonicalIp: a stanza's inet6 address
 * written `::ffff:a.b.c.d` is an IPv6 setting and must not compare equal to an inet one.)
 */
export function hostAddress(text: string): string {
  const bare = text.replace(/^\[|\]$/g, '');
  if (isIPv4(bare)) return dotted(bare.split('.').map(Number));
  if (!isIPv6(bare)) return text;
  const zoneAt = bare.indexOf('%');
  const zone = zoneAt < 0 ? '' : bare.slice(zoneAt).toLowerCase();
  const groups = ipv6Groups(zoneAt < 0 ? bare : bare.slice(0, zoneAt));
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups;
  if (zone === '' && g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0) {
    // ::ffff:0:0/96 is mapped; ::/96 is the deprecated compatible form, except :: and ::1 (and
    // the rest of ::/112), which are IPv6's own unspecified and loopback addresses.
    if (g5 === 0xffff || (g5 === 0 && g6 !== 0)) return dotted([g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff]);
  }
  return compressed(groups) + zone;
}

function dotted(octets: readonly number[]): string {
  return octets.map((o) => String(o)).join('.');
}

/** The eight 16-bit groups of a valid IPv6 address (an embedded IPv4 tail becomes two groups). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4 !== null) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? [] : new Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...fill, ...tailGroups].map((g) => parseInt(g, 16));
}

/** RFC 5952: lower-case hex, no leading zeros, the longest run (>= 2) of zero groups as `::`. */
function compressed(groups: readonly number[]): string {
  const hex = groups.map((g) => g.toString(16));
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength && j - i >= 2) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
