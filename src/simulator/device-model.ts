/**
 * What hardware a simulated Monitoring Point has: a model name and its physical interfaces, with
 * the transmission parameters GET /appliance/capability reports.
 */

interface WiredPort {
  kind: 'wired';
  autoneg: boolean;
  speeds: number[];
  duplex: ('half' | 'full')[];
}

interface WirelessPort {
  kind: 'wireless';
}

export type PhysicalPort = WiredPort | WirelessPort;

export interface DeviceModel {
  model: string;
  /** Physical interfaces by name, in the order the device lists them. */
  interfaces: Record<string, PhysicalPort>;
}

const gigabit = (): WiredPort => ({ kind: 'wired', autoneg: true, speeds: [10, 100, 1000], duplex: ['half', 'full'] });

/**
 * Built-in models. The names follow the vendor's product line loosely; the port layouts are this
 * project's invention, chosen to cover one port, two ports, wireless and a port without
 * auto-negotiation.
 */
export const BUILT_IN_MODELS: Readonly<Record<string, () => DeviceModel>> = {
  m50: () => ({ model: 'm50', interfaces: { eth0: gigabit(), eth1: gigabit(), wlan0: { kind: 'wireless' } } }),
  m22: () => ({ model: 'm22', interfaces: { eth0: gigabit(), wlan0: { kind: 'wireless' } } }),
  m70: () => ({
    model: 'm70',
    interfaces: {
      eth0: gigabit(),
      eth1: gigabit(),
      // SFP+ ports: fixed 10 Gb/s full duplex, no auto-negotiation.
      eth2: { kind: 'wired', autoneg: false, speeds: [10000], duplex: ['full'] },
      eth3: { kind: 'wired', autoneg: false, speeds: [10000], duplex: ['full'] },
    },
  }),
  virtual: () => ({
    model: 'virtual',
    interfaces: { eth0: { kind: 'wired', autoneg: false, speeds: [10000], duplex: ['full'] } },
  }),
};

export const DEFAULT_MODEL = 'm50';

export function builtInModel(name: string): DeviceModel | undefined {
  return Object.hasOwn(BUILT_IN_MODELS, name) ? BUILT_IN_MODELS[name]?.() : undefined;
}

/** What kind of thing an interface name denotes on this device, or undefined if none. */
export type InterfaceKind =
  | { kind: 'wired'; port: WiredPort }
  | { kind: 'wireless' }
  | { kind: 'vlan'; parent: string; id: number }
  | { kind: 'bridge' };

const VLAN_NAME = /^([A-Za-z][A-Za-z0-9]*)\.(\d{1,5})$/;

export function interfaceKind(model: DeviceModel, name: string): InterfaceKind | undefined {
  const port = Object.hasOwn(model.interfaces, name) ? model.interfaces[name] : undefined;
  if (port !== undefined) return port.kind === 'wired' ? { kind: 'wired', port } : { kind: 'wireless' };
  if (name === 'bridge1') return { kind: 'bridge' };
  const vlan = VLAN_NAME.exec(name);
  if (vlan !== null && Object.hasOwn(model.interfaces, vlan[1] ?? '')) {
    return { kind: 'vlan', parent: vlan[1] ?? '', id: Number(vlan[2]) };
  }
  return undefined;
}

/** Whether the device can configure the interface: a VLAN only on a wired physical port. */
export function isConfigurableInterface(model: DeviceModel, name: string): boolean {
  const kind = interfaceKind(model, name);
  return kind !== undefined && (kind.kind !== 'vlan' || model.interfaces[kind.parent]?.kind === 'wired');
}

/** The body of GET /appliance/capability. */
export function capabilityOf(model: DeviceModel): Record<string, unknown> {
  const interfaces: Record<string, unknown> = {};
  for (const [name, port] of Object.entries(model.interfaces)) {
    interfaces[name] =
      port.kind === 'wireless'
        ? { wireless: true }
        : { autoneg: port.autoneg, speeds: [...port.speeds], duplex: [...port.duplex] };
  }
  return interfaces;
}
