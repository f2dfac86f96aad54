import { isIPv4, isIPv6 } from 'node:net';

/**
 * agent.yaml `status_page.listen`: `HOST:PORT` on this laptop only. The page shows job logs and
 * device names to whoever connects, and has no login: so it is served on loopback and nowhere
 * else (127.0.0.0/8, ::1 written as [::1], or localhost, which is bound as 127.0.0.1).
 */

export interface ListenAddress {
  /** The address bound: an IPv4 loopback literal, or ::1. */
  host: string;
  /** 0: any free port (tests); the bound port is logged. */
  port: number;
  /** As written in agent.yaml. */
  text: string;
}

const HINT = 'write it like 127.0.0.1:8471 (or [::1]:8471, localhost:8471): the status page is for this laptop only';

export function parseListen(text: string): ListenAddress | { message: string; hint: string } {
  const match = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  if (match === null) return { message: `'${text}' is not HOST:PORT`, hint: HINT };
  const host = (match[1] ?? match[2] ?? '').toLowerCase();
  const port = Number(match[3]);
  if (port > 65535) return { message: `port ${port} is out of range (0 to 65535)`, hint: HINT };
  if (match[1] !== undefined && !isIPv6(host)) return { message: `'${host}' is not an IPv6 address`, hint: HINT };
  if (match[2] !== undefined && isIPv6(host))
    return { message: `an IPv6 address is written in brackets: [${host}]:${port}`, hint: HINT };
  if (host === 'localhost') return { host: '127.0.0.1', port, text };
  if (isIPv4(host) && host.startsWith('127.')) return { host, port, text };
  if (isIPv6(host) && isIpv6Loopback(host)) return { host: '::1', port, text };
  return {
    message: `'${host}' is not a loopback address: the status page is served on this laptop only and has no login`,
    hint: HINT,
  };
}

function isIpv6Loopback(host: string): boolean {
  // ::1 in any spelling (0:0:0:0:0:0:0:1), and the IPv4-mapped loopback ::ffff:127.x.y.z.
  if (/^(?:0{0,4}:){2,7}0{0,3}1$/.test(host)) return true;
  return /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
