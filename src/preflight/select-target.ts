import type { Interface, KeyPath, StickFile } from '../config/index.js';
import { ipv4UrlHost } from './address-fit.js';

type Dot1x = NonNullable<Interface['dot1x']>;

type MonitoringPointModel = StickFile['monitoring_points'][number];

/** The stick's interface a preflight tries, and whose 802.1X rides the laptop's port. */
export interface PreflightTarget {
  monitoringPoint: string;
  /** Index of the Monitoring Point in the stick, for key paths. */
  index: number;
  interfaceName: string;
  iface: Interface;
  /** The 802.1X the port sees: the interface's own, or its VLAN parent's (a VLAN rides its parent's port). */
  dot1x?: { block: Dot1x; path: KeyPath };
  vlan?: { parent: string; id: number };
  /** The Monitoring Point's `url` host when it is an IPv4 address: where the MP is to be reached. */
  managementHost?: string;
}

export type TargetChoice = { target: PreflightTarget } | { usage: string };

const listed = (names: readonly string[]): string => names.map((n) => JSON.stringify(n)).join(', ');

/**
 * Picks the Monitoring Point and interface: the named ones, or the stick's only Monitoring Point
 * and its only 802.1X interface. Several to choose from, or a name the stick lacks, is a usage
 * error naming the choices. Pure.
 */
export function selectTarget(
  model: StickFile,
  wanted: { monitoringPoint?: string | undefined; interface?: string | undefined },
): TargetChoice {
  const names = model.monitoring_points.map((mp) => mp.name);
  let index: number;
  if (wanted.monitoringPoint === undefined) {
    if (names.length !== 1)
      return {
        usage: `the stick has ${names.length} Monitoring Points: choose one with --monitoring-point (${listed(names)})`,
      };
    index = 0;
  } else {
    index = names.indexOf(wanted.monitoringPoint);
    if (index < 0)
      return {
        usage: `the stick has no Monitoring Point ${JSON.stringify(wanted.monitoringPoint)}: it has ${listed(names)}`,
      };
  }
  const mp = model.monitoring_points[index] as MonitoringPointModel;
  const interfaces = mp.interfaces ?? {};
  const all = Object.keys(interfaces);
  let name: string;
  if (wanted.interface === undefined) {
    const withDot1x = all.filter((n) => interfaces[n]?.dot1x !== undefined && interfaces[n].wireless === undefined);
    if (withDot1x.length !== 1)
      return {
        usage:
          withDot1x.length === 0
            ? `${mp.name} has no wired 802.1X interface: choose one with --interface (${listed(all)})`
            : `${mp.name} has ${withDot1x.length} 802.1X interfaces: choose one with --interface (${listed(withDot1x)})`,
      };
    name = withDot1x[0] as string;
  } else {
    name = wanted.interface;
    if (!all.includes(name))
      return { usage: `${mp.name} has no interface ${JSON.stringify(name)}: it has ${listed(all)}` };
  }
  const iface = interfaces[name] as Interface;
  if (iface.wireless !== undefined)
    return { usage: `${name} of ${mp.name} is wireless: preflight tries a wired switch port only` };
  const target: PreflightTarget = { monitoringPoint: mp.name, index, interfaceName: name, iface };
  const managementHost = ipv4UrlHost(mp.url);
  if (managementHost !== undefined) target.managementHost = managementHost;
  const base: KeyPath = ['monitoring_points', index, 'interfaces'];
  if (iface.vlan !== undefined) {
    target.vlan = { parent: iface.vlan.link, id: iface.vlan.id };
    const parentDot1x = interfaces[iface.vlan.link]?.dot1x;
    if (parentDot1x !== undefined) target.dot1x = { block: parentDot1x, path: [...base, iface.vlan.link, 'dot1x'] };
  }
  if (iface.dot1x !== undefined) target.dot1x = { block: iface.dot1x, path: [...base, name, 'dot1x'] };
  return { target };
}

/** Every wired 802.1X interface of a Monitoring Point, for the flow's preflight of a whole stick. */
export function dot1xInterfaces(mp: MonitoringPointModel): string[] {
  return Object.entries(mp.interfaces ?? {})
    .filter(([, iface]) => iface.dot1x !== undefined && iface.wireless === undefined)
    .map(([name]) => name);
}
