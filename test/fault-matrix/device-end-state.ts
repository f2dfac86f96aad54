import { formatFault, parseFault, type SimulatorHandle, type SimulatorState } from '../../src/simulator/index.js';

/**
 * A device's end state as the simulator's control port shows it (`GET /_sim/state`, plain HTTP on
 * loopback, answering during outages too): what is active, what is still pending, and whether a
 * fault was met.
 */

type Stanzas = Map<string, string>;

/** The control port's state, over HTTP as a rehearsal reads it. */
export async function controlState(sim: SimulatorHandle): Promise<SimulatorState> {
  const response = await fetch(`${sim.controlUrl}/state`);
  if (response.status !== 200) throw new Error(`GET ${sim.controlUrl}/state answered ${response.status}`);
  return ((await response.json()) as { state: SimulatorState }).state;
}

/** Polls the control port until the device is in `phase` (a restart fault keeps it away past the run). */
export async function waitForPhase(sim: SimulatorHandle, phase: string, timeoutMs = 20_000): Promise<SimulatorState> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const state = await controlState(sim);
    if (state.phase === phase) return state;
    if (Date.now() > end) throw new Error(`the device stayed "${state.phase}", not "${phase}", for ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Each stanza of a view as "name family" -> its configuration, without what the device adds on its
 * own (`in_use`, the 802.1X state); a stanza marked for removal (null) maps to "null".
 */
function stanzas(view: readonly Record<string, unknown>[]): Stanzas {
  const out: Stanzas = new Map();
  for (const iface of view) {
    const families = (iface.families ?? {}) as Record<string, Record<string, unknown> | null>;
    for (const [family, stanza] of Object.entries(families)) {
      if (stanza === null) {
        out.set(`${String(iface.name)} ${family}`, 'null');
        continue;
      }
      const { in_use: _inUse, ...config } = stanza;
      out.set(
        `${String(iface.name)} ${family}`,
        JSON.stringify(Object.entries(config).sort(([a], [b]) => a.localeCompare(b))),
      );
    }
  }
  return out;
}

/** The stanzas whose pending version differs from the active one ("eth1 inet"): what the next restart would change. */
export function leftPending(state: SimulatorState): string[] {
  const active = stanzas(state.interfaces.active);
  const pending = stanzas(state.interfaces.pending);
  const keys = new Set([...active.keys(), ...pending.keys()]);
  return [...keys]
    .filter((key) => pending.get(key) !== active.get(key) && !(pending.get(key) === 'null' && !active.has(key)))
    .sort();
}

/** The interfaces with an active stanza. */
export function activeInterfaces(state: SimulatorState): string[] {
  return state.interfaces.active.map((i) => String(i.name)).sort();
}

const RESTART_FAULTS = ['restart-delay', 'no-return', 'pending-stuck', 'drop-field', 'new-cert'];

/**
 * Whether the device met any of the `armed` faults: a request the log says one shaped, a restart
 * while a restart fault was armed, or a fault used up (no longer listed).
 */
export function faultMet(state: SimulatorState, armed: readonly string[]): boolean {
  const specs = armed.map((fault) => formatFault(parseFault(fault)));
  return (
    state.requests.some((r) => r.fault !== undefined) ||
    (state.restarts > 0 && specs.some((fault) => RESTART_FAULTS.includes(parseFault(fault).kind))) ||
    specs.some((fault) => !state.faults.includes(fault))
  );
}
