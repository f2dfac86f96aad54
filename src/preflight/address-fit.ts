import { parseCidr, sameSubnet, type Interface } from '../config/index.js';

/** What the port gave: a DHCP lease, or the stick's static address set for the test. */
export interface PortAddress {
  address: string;
  prefix: number;
  gateway?: string;
}

/**
 * Whether the addresses the stick expects fit what the port gave. Pure.
 * - DHCP: what the stick ties to this interface's network is judged against the leased subnet:
 *   every next hop of its static routes must lie in it (the MP could not reach it otherwise), and
 *   the MP's management address (`managementHost`, the `url`'s IPv4 literal) fits when it lies in
 *   it: the MP will be reached on this port. A management address outside says nothing: another
 *   interface, one the stick may not even list, can carry it. The stick gives a DHCP interface
 *   no address or gateway of its own, and DNS servers need not be on the link, so nothing else is
 *   compared. Nothing to compare: null.
 * - static: the stick's address and gateway belong on this port when the gateway answers there;
 *   without a gateway it cannot be judged: null.
 */
export function judgeFit(
  iface: Interface,
  given: PortAddress | undefined,
  gatewayAnswered: boolean | null,
  managementHost?: string,
): {
  fits: boolean | null;
  problems: string[];
} {
  const ipv4 = iface.ipv4;
  if (ipv4 === undefined || given === undefined) return { fits: null, problems: [] };
  if (ipv4.method === 'static') {
    if (ipv4.gateway === undefined || gatewayAnswered === null) return { fits: null, problems: [] };
    return gatewayAnswered
      ? { fits: true, problems: [] }
      : {
          fits: false,
          problems: [
            `the stick's gateway ${ipv4.gateway} did not answer on this port with ${ipv4.address ?? given.address}: the port is not in that subnet or VLAN`,
          ],
        };
  }
  const hops = (ipv4.routes ?? []).map((r) => r.via).filter((via) => parseCidr(`${via}/32`) !== undefined);
  const outside = hops.filter((via) => !sameSubnet(via, given.address, given.prefix));
  if (outside.length > 0)
    return {
      fits: false,
      problems: outside.map(
        (via) =>
          `the stick routes through ${via}, which is outside the subnet ${given.address}/${given.prefix} the port's DHCP gave`,
      ),
    };
  const managed =
    managementHost !== undefined &&
    parseCidr(`${managementHost}/32`) !== undefined &&
    sameSubnet(managementHost, given.address, given.prefix);
  return { fits: hops.length > 0 || managed ? true : null, problems: [] };
}

/** The IPv4 literal host of a Monitoring Point's `url`, or undefined for a name or an IPv6 address. */
export function ipv4UrlHost(url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return undefined;
  }
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) && parseCidr(`${host}/32`) !== undefined ? host : undefined;
}
