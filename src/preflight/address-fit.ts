import { parseCidr, sameSubnet, type Interface } from '../config/index.js';

/** What the port gave: a DHCP lease, or the stick's static address set for the test. */
export interface PortAddress {
  address: string;
  prefix: number;
  gateway?: string;
}

/**
 * Whether the addresses the stick expects fit what the port gave. Pure.
 * - DHCP: every next hop of the interface's static routes must lie in the leased subnet (the MP
 *   could not reach it otherwise); with no routes there is nothing to compare: null.
 * - static: the stick's address and gateway belong on this port when the gateway answers there;
 *   without a gateway it cannot be judged: null.
 */
export function judgeFit(
  iface: Interface,
  given: PortAddress | undefined,
  gatewayAnswered: boolean | null,
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
  if (hops.length === 0) return { fits: null, problems: [] };
  const outside = hops.filter((via) => !sameSubnet(via, given.address, given.prefix));
  if (outside.length === 0) return { fits: true, problems: [] };
  return {
    fits: false,
    problems: outside.map(
      (via) =>
        `the stick routes through ${via}, which is outside the subnet ${given.address}/${given.prefix} the port's DHCP gave`,
    ),
  };
}
