import { z } from 'zod';
import { Stanza } from './stanza.js';
import { FAMILIES } from './vocabulary.js';
import { fieldPath, parseWire, ShapeProblem } from './wire-shape.js';

/**
 * An interface as GET /interface/ shows it, normalised to the `families` shape. Two shapes come
 * off the wire (docs/device-model.md, "Tolerance"): the documented one with `families`, and the flat
 * one of older firmware and lab scripts, per-family fields at the top level with `family`, one
 * entry per family. Both become the same DeviceInterface.
 */

export type ConfigState = 'active' | 'pending';

export interface DeviceInterface {
  name: string;
  configState: ConfigState;
  /** `null`: in the pending view, a stanza about to be removed. */
  families: { inet?: Stanza | null; inet6?: Stanza | null };
  /** Interface-level fields the device adds beside `families` (e.g. `dot1x_state`), kept as they are. */
  extra: Record<string, unknown>;
}

const FamiliesEntry = z.looseObject({
  name: z.string(),
  config_state: z.string().optional(),
  families: z.looseObject({
    inet: Stanza.nullable().optional(),
    inet6: Stanza.nullable().optional(),
  }),
});

const FlatEntry = z.looseObject({
  name: z.string(),
  family: z.enum(FAMILIES),
  config_state: z.string().optional(),
});

/** The `interfaces` list of GET /interface/. `placeOf` names an entry's place in the answer, for messages. */
export function normaliseInterfaces(
  entries: readonly unknown[],
  requested: ConfigState,
  placeOf: (index: number) => PropertyKey[] = (index) => ['interfaces', index],
): DeviceInterface[] {
  const byName = new Map<string, DeviceInterface>();
  entries.forEach((entry, index) => {
    const where = placeOf(index);
    if (!isObject(entry)) throw new ShapeProblem(`${fieldPath(where)}: expected an interface object`);
    if ('families' in entry) {
      const parsed = parseWire(FamiliesEntry, entry, where);
      const { name, config_state: state, families, ...extra } = parsed;
      const known: DeviceInterface['families'] = {};
      for (const family of FAMILIES) if (families[family] !== undefined) known[family] = families[family];
      byName.set(name, { name, configState: stateOf(state, requested), families: known, extra });
      return;
    }
    // Flat: the entry is one stanza plus its name, family and state.
    const { name, family, config_state: state, ...fields } = parseWire(FlatEntry, entry, where);
    const stanza = parseWire(Stanza, fields, where);
    const existing = byName.get(name) ?? { name, configState: stateOf(state, requested), families: {}, extra: {} };
    existing.families[family] = stanza;
    byName.set(name, existing);
  });
  return [...byName.values()];
}

/**
 * The `interface` of GET /interface/{name}/: one families-shape object, one flat stanza, or a list
 * of flat stanzas (one per family). A flat stanza without `name` is the interface asked for.
 */
export function normaliseOneInterface(value: unknown, name: string, requested: ConfigState): DeviceInterface {
  const list: unknown[] = Array.isArray(value) ? value : [value];
  const named = list.map((entry) => (isObject(entry) && !('name' in entry) ? { ...entry, name } : entry));
  const placeOf = (index: number): PropertyKey[] => (Array.isArray(value) ? ['interface', index] : ['interface']);
  const found = normaliseInterfaces(named, requested, placeOf).find((i) => i.name === name);
  if (found === undefined) throw new ShapeProblem(`interface: expected the interface "${name}"`);
  return found;
}

function stateOf(reported: string | undefined, requested: ConfigState): ConfigState {
  // A device that ignores config_state says so here; an unknown value is not trusted.
  return reported === 'active' || reported === 'pending' ? reported : requested;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
