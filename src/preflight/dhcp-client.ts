import { createInterface } from 'node:readline';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isIPv4 } from 'node:net';
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
printf '${MARK} ip=%s mask=%s router=%s dns=%s\\n' "$ip" "$mask" "$router" "$dns"
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
): Promise<DhcpLease | undefined> {
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
  const lease = await new Promise<DhcpLease | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const parsed = parseLeaseLine(line);
      if (parsed === undefined) return;
      clearTimeout(timer);
      resolve(parsed);
    });
    child.once('exit', () => setImmediate(() => (clearTimeout(timer), resolve(undefined))));
  });
  await stopDaemon(child);
  return lease;
}

/** One line of our script's output; undefined for anything else or anything malformed. Pure. */
export function parseLeaseLine(line: string): DhcpLease | undefined {
  if (!line.startsWith(`${MARK} `)) return undefined;
  const field = (name: string) => new RegExp(`(?:^| )${name}=([^ ]*)`).exec(line)?.[1] ?? '';
  const address = field('ip');
  const prefix = Number(field('mask'));
  if (!isIPv4(address) || !Number.isInteger(prefix) || prefix < 1 || prefix > 32) return undefined;
  const gateway = field('router').split(',')[0] ?? '';
  const dnsPart = /(?:^| )dns=(.*)$/.exec(line)?.[1] ?? '';
  const dns = dnsPart.split(' ').filter((d) => isIPv4(d));
  return { address, prefix, ...(isIPv4(gateway) ? { gateway } : {}), dns };
}
