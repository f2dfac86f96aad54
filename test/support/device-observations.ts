import type { SimulatorHandle } from '../../src/simulator/index.js';

/** What a simulated device was sent and what it runs now, read through the simulator's own record. */

/** Write requests as `METHOD path [name family]`, the order the documentation prescribes. */
export function writeSequence(device: SimulatorHandle): string[] {
  return device
    .requests()
    .filter((r) => r.method !== 'GET')
    .map((r) => {
      const body = (r.body ?? {}) as Record<string, unknown>;
      const what =
        typeof body.name === 'string'
          ? ` ${body.name} ${String(body.family)}`
          : r.query.family !== undefined
            ? ` family=${r.query.family}`
            : '';
      return `${r.method} ${r.path}${what}`;
    });
}

/** The device's active view of one interface, as its state shows it. */
export function activeInterface(device: SimulatorHandle, name: string): Record<string, unknown> | undefined {
  return device.state().interfaces.active.find((i) => i.name === name);
}

/** The device's active eth1 inet stanza. */
export function activeEth1(device: SimulatorHandle): Record<string, unknown> | undefined {
  const eth1 = activeInterface(device, 'eth1') as { families?: { inet?: Record<string, unknown> } } | undefined;
  return eth1?.families?.inet;
}
