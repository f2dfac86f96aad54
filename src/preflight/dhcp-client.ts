import { createInterface } from 'node:readline';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isIPv4 } from 'node:net';
import { visibleText } from '../core/visible-text.js';
import { spawnIn, stopDaemon, type PortSession } from './port-namespace.js';

/** What a DHCP server offered and acknowledged. */
export interface DhcpLease {
  address: string;
  prefix: number;
  gateway?: string;
  dns: string[];
}

const MARK = 'MPPF-LEASE';

/**
 * busybox udhcpc calls its script with the lease in the environment; ours only prints it (it
 * configures nothing: the address is set by the preflight itself, inside its namespace, and
 * Debian's default script would rewrite the laptop's resolv.conf).
 */
const SCRIPT = `#!/bin/sh
[ "$1" = bound ] || [ "$1" = renew ] || exit 0
printf '${MARK} ip=%s mask=%s subnet=%s router=%s dns=%s\\n' "$ip" "$mask" "$subnet" "$router" "$dns"
`;

/**
 * Asks for an address on `device` inside the namespace with udhcpc, for up to `timeoutMs`.
 * Undefined: no server answered. The server's words are checked one by one: only well-formed
 * IPv4 addresses and a prefix length come back.
 */
export async function requestLease(
  session: PortSession,
  device: string,
  timeoutMs: number,
): Promise<DhcpLease | { unusable: string } | undefined> {
  const script = join(session.dir, 'udhcpc-script');
  await writeFile(script, SCRIPT, { mode: 0o700 });
  const tries = Math.max(1, Math.floor(timeoutMs / 1000));
  // -f foreground, -q quit once bound, -n give up after the tries, one DISCOVER a second.
  const child = spawnIn(session, session.tools.udhcpc, [
    '-f',
    '-q',
    '-n',
    '-i',
    device,
    '-s',
    script,
    '-t',
    String(tries),
    '-T',
    '1',
    '-A',
    '1',
  ]);
  // A server that answered with a lease we refuse is not "no server": kept to say so at the end.
  let refused: string | undefined;
  const lease = await new Promise<DhcpLease | { unusable: string } | undefined>((resolve) => {
    const done = () => (clearTimeout(timer), resolve(refused === undefined ? undefined : { unusable: refused }));
    const timer = setTimeout(done, timeoutMs);
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const parsed = parseLeaseLine(line);
      if (parsed === undefined) {
        refused = leaseProblem(line) ?? refused;
        return;
      }
      clearTimeout(timer);
      resolve(parsed);
    });
    child.once('exit', () => setImmediate(done));
  });
  await stopDaemon(child);
  return lease;
}

const fieldOf = (line: string, name: string) => new RegExp(`(?:^| )${name}=([^ ]*)`).exec(line)?.[1] ?? '';

/**
 * The prefix length of the lease on our script's line: from the server's netmask itself where
 * udhcpc passes it, as udhcpc's own `mask` counts bits of any mask (255.0.255.0 becomes 24).
 * NaN for a mask that is not a prefix.
 */
function prefixOf(line: string): number {
  const subnet = fieldOf(line, 'subnet');
  if (subnet === '') return Number(fieldOf(line, 'mask'));
  if (!isIPv4(subnet)) return NaN;
  const bits = subnet
    .split('.')
    .map((octet) => Number(octet).toString(2).padStart(8, '0'))
    .join('');
  return /^1*0*$/.test(bits) ? (bits.indexOf('0') === -1 ? 32 : bits.indexOf('0')) : NaN;
}

/** One line of our script's output; undefined for anything else or anything malformed. Pure. */
export function parseLeaseLine(line: string): DhcpLease | undefined {
  if (!line.startsWith(`${MARK} `)) return undefined;
  const field = (name: string) => fieldOf(line, name);
  const address = field('ip');
  const prefix = prefixOf(line);
  if (!isIPv4(address) || !Number.isInteger(prefix) || prefix < 1 || prefix > 32) return undefined;
  const gateway = field('router').split(',')[0] ?? '';
  const dnsPart = /(?:^| )dns=(.*)$/.exec(line)?.[1] ?? '';
  const dns = dnsPart.split(' ').filter((d) => isIPv4(d));
  return { address, prefix, ...(isIPv4(gateway) ? { gateway } : {}), dns };
}

/** Why our script's line is no usable lease (the server's values quoted, escaped), or undefined for another line. Pure. */
export function leaseProblem(line: string): string | undefined {
  if (!line.startsWith(`${MARK} `) || parseLeaseLine(line) !== undefined) return undefined;
  const shown = (name: string) => JSON.stringify(visibleText(fieldOf(line, name).slice(0, 40)));
  if (!isIPv4(fieldOf(line, 'ip'))) return `the address ${shown('ip')} is not an IPv4 address`;
  return fieldOf(line, 'subnet') === ''
    ? `the prefix length ${shown('mask')} is not one from 1 to 32`
    : `the netmask ${shown('subnet')} is not a prefix from /1 to /32`;
}
