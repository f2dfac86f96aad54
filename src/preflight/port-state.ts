import { z } from 'zod';

/**
 * The laptop port's own network state before a preflight takes it: whether it was up, its
 * addresses and the routes through it. Moving an interface to another namespace drops all of
 * them; this is what puts them back. Read from `ip -j` (zod-checked), kept as a file in the
 * run's private folder so the next run can restore a port a killed run left behind.
 */

const AddrInfo = z.looseObject({
  family: z.enum(['inet', 'inet6']).or(z.string()),
  local: z.string(),
  prefixlen: z.number().int(),
  scope: z.string().optional(),
  broadcast: z.string().optional(),
  dynamic: z.boolean().optional(),
  noprefixroute: z.boolean().optional(),
  valid_life_time: z.number().int().optional(),
  preferred_life_time: z.number().int().optional(),
});
const IpAddrShow = z.array(
  z.looseObject({
    ifname: z.string(),
    flags: z.array(z.string()),
    master: z.string().optional(),
    addr_info: z.array(AddrInfo).optional(),
  }),
);
const IpRoute = z.looseObject({
  dst: z.string(),
  gateway: z.string().optional(),
  protocol: z.string().optional(),
  scope: z.string().optional(),
  metric: z.number().int().optional(),
  prefsrc: z.string().optional(),
});
const IpRouteShow = z.array(IpRoute);

export const PortState = z.strictObject({
  port: z.string(),
  up: z.boolean(),
  /** The bridge the port was a port of: moving it to another namespace takes it out. */
  master: z.string().optional(),
  addresses: z.array(
    z.strictObject({
      family: z.literal([4, 6]),
      local: z.string(),
      prefixlen: z.number().int(),
      broadcast: z.string().optional(),
      // NetworkManager sets its addresses so: put back without it, the kernel adds a route the port had not.
      noprefixroute: z.literal(true).optional(),
      /** Seconds left of a DHCP client's address when saved: it goes back with them, never as a permanent one. */
      lifetimes: z.strictObject({ valid: z.number().int(), preferred: z.number().int() }).optional(),
    }),
  ),
  routes: z.array(
    z.strictObject({
      family: z.literal([4, 6]),
      dst: z.string(),
      gateway: z.string().optional(),
      protocol: z.string().optional(),
      scope: z.string().optional(),
      metric: z.number().int().optional(),
      prefsrc: z.string().optional(),
    }),
  ),
});
export type PortState = z.infer<typeof PortState>;

/**
 * The state file: the port's state and the network namespace it was taken from (`net:[inode]`),
 * so a later run gives a killed run's port back only to the namespace it came from.
 */
export const SavedPortState = z.strictObject({ origin: z.string(), state: PortState });
export type SavedPortState = z.infer<typeof SavedPortState>;

/** The state from `ip -j addr show dev PORT` and `ip -j -4/-6 route show dev PORT`. */
export function parsePortState(port: string, addrJson: string, routes4Json: string, routes6Json: string): PortState {
  const link = IpAddrShow.parse(JSON.parse(addrJson))[0];
  if (link === undefined) throw new Error(`ip did not describe ${port}`);
  const addresses = (link.addr_info ?? [])
    // Link-local and SLAAC addresses come back by themselves once the port is up again. A DHCP
    // client's IPv4 address (dynamic) does not, and without it the routes through its subnet
    // cannot come back either: it is put back with the lifetimes it had left.
    .filter((a) => a.scope !== 'link' && (a.family === 'inet' || (a.family === 'inet6' && a.dynamic !== true)))
    .map((a) => ({
      family: a.family === 'inet' ? (4 as const) : (6 as const),
      local: a.local,
      prefixlen: a.prefixlen,
      ...(a.broadcast === undefined ? {} : { broadcast: a.broadcast }),
      ...(a.noprefixroute === true ? { noprefixroute: true as const } : {}),
      ...(a.dynamic === true && a.valid_life_time !== undefined && a.preferred_life_time !== undefined
        ? { lifetimes: { valid: a.valid_life_time, preferred: a.preferred_life_time } }
        : {}),
    }));
  const routes = [
    ...IpRouteShow.parse(JSON.parse(routes4Json)).map((r) => ({ ...r, family: 4 as const })),
    ...IpRouteShow.parse(JSON.parse(routes6Json)).map((r) => ({ ...r, family: 6 as const })),
  ]
    // The kernel makes its own routes again from the addresses (proto kernel) and for multicast.
    .filter((r) => r.protocol !== 'kernel' && !r.dst.startsWith('ff00::') && !r.dst.startsWith('multicast'))
    .map((r) => ({
      family: r.family,
      dst: r.dst,
      ...(r.gateway === undefined ? {} : { gateway: r.gateway }),
      ...(r.protocol === undefined ? {} : { protocol: r.protocol }),
      ...(r.scope === undefined ? {} : { scope: r.scope }),
      ...(r.metric === undefined ? {} : { metric: r.metric }),
      ...(r.prefsrc === undefined ? {} : { prefsrc: r.prefsrc }),
    }));
  return {
    port,
    up: link.flags.includes('UP'),
    ...(link.master === undefined ? {} : { master: link.master }),
    addresses,
    routes,
  };
}

/** The `ip` argument lists that put the state back, in order: link, then addresses, then routes. Pure. */
export function restoreCommands(state: PortState): string[][] {
  const dev = state.port;
  const commands: string[][] = [
    ['link', 'set', dev, ...(state.master === undefined ? [] : ['master', state.master]), state.up ? 'up' : 'down'],
  ];
  for (const a of state.addresses) {
    commands.push([
      `-${a.family}`,
      'addr',
      'replace',
      `${a.local}/${a.prefixlen}`,
      ...(a.broadcast === undefined ? [] : ['broadcast', a.broadcast]),
      'dev',
      dev,
      ...(a.noprefixroute === true ? ['noprefixroute'] : []),
      ...(a.lifetimes === undefined
        ? []
        : ['valid_lft', String(a.lifetimes.valid), 'preferred_lft', String(a.lifetimes.preferred)]),
    ]);
  }
  for (const r of state.routes) {
    commands.push([
      `-${r.family}`,
      'route',
      'replace',
      r.dst,
      ...(r.gateway === undefined ? [] : ['via', r.gateway]),
      'dev',
      dev,
      ...(r.protocol === undefined ? [] : ['proto', r.protocol]),
      ...(r.scope === undefined ? [] : ['scope', r.scope]),
      ...(r.metric === undefined ? [] : ['metric', String(r.metric)]),
      ...(r.prefsrc === undefined ? [] : ['src', r.prefsrc]),
    ]);
  }
  return commands;
}
