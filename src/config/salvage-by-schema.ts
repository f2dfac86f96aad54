import { z } from 'zod';
import { unwrap } from './schema-roles.js';

/**
 * When the schema refuses part of a file, the rest is still judged, so one typo costs no second
 * trip to the site: this keeps every value of `data` that its own schema accepts, leaf by leaf,
 * and leaves out what the schema refused (reported already) and unknown keys. An object keeps its
 * other keys when one is refused, also a required one: a rule that needs a missing value skips
 * itself, the others run. A value that was given but refused is remembered on its object
 * (`wasRefused`), so a rule never says "missing" about a key the person did write.
 *
 * Derived from the schema itself: a key added to the schema is salvaged without a list to update.
 */

const REFUSED = Symbol('keys the schema refused');
const REJECT = Symbol('refused');

type Salvaged = unknown;

/** The parts of `data` the schema accepts, or undefined when even its top is of the wrong shape. */
export function salvageBySchema(schema: z.ZodType, data: unknown): Salvaged {
  const kept = salvageValue(schema, data);
  return kept === REJECT ? undefined : kept;
}

/** True when `block` (salvaged) had `key` written with a value the schema refused. */
export function wasRefused(block: object, key: string): boolean {
  const refused = (block as { [REFUSED]?: ReadonlySet<string> })[REFUSED];
  return refused?.has(key) === true;
}

/** The person wrote `key` in `block`: with a value (kept), or one the schema refused. */
export function given(block: object, key: string): boolean {
  return (block as Record<string, unknown>)[key] !== undefined || wasRefused(block, key);
}

function isBlock(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function salvageValue(schema: z.ZodType, value: unknown): unknown {
  const inner = unwrap(schema);
  if (value === undefined || value === null) return leaf(schema, value);
  if (inner instanceof z.ZodObject) {
    return isBlock(value) ? salvageBlock(inner.shape, value) : REJECT;
  }
  if (inner instanceof z.ZodRecord) return isBlock(value) ? salvageRecord(inner.valueType as z.ZodType, value) : REJECT;
  if (inner instanceof z.ZodArray)
    return Array.isArray(value) ? salvageList(inner.element as z.ZodType, value) : REJECT;
  return leaf(schema, value);
}

function leaf(schema: z.ZodType, value: unknown): unknown {
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : REJECT;
}

function salvageBlock(shape: Record<string, z.ZodType>, raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const refused = new Set<string>();
  for (const [key, schema] of Object.entries(shape)) {
    if (!Object.hasOwn(raw, key) || raw[key] === undefined) continue;
    const kept = salvageValue(schema, raw[key]);
    if (kept === REJECT) refused.add(key);
    else if (kept !== undefined) out[key] = kept;
  }
  // Not enumerable: the salvaged block spreads, serialises and iterates like a parsed one.
  if (refused.size > 0) Object.defineProperty(out, REFUSED, { value: refused });
  return out;
}

function salvageRecord(valueType: z.ZodType, raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const refused = new Set<string>();
  for (const [key, value] of Object.entries(raw)) {
    // Said by map-keys.ts; assigned here it would become the map's prototype, not an entry.
    if (key === '__proto__') continue;
    const kept = salvageValue(valueType, value);
    if (kept === REJECT) refused.add(key);
    else out[key] = kept;
  }
  if (refused.size > 0) Object.defineProperty(out, REFUSED, { value: refused });
  return out;
}

/**
 * A list of blocks keeps each entry's index (undefined where one was refused), so problems name
 * the right entry; a list of plain values is kept whole or refused whole (no rule reads into one
 * whose entries it would have to re-index).
 */
function salvageList(element: z.ZodType, raw: readonly unknown[]): unknown {
  const blocks = unwrap(element) instanceof z.ZodObject;
  const out: unknown[] = [];
  for (const item of raw) {
    const kept = salvageValue(element, item);
    if (kept !== REJECT) out.push(kept);
    else if (blocks) out.push(undefined);
    else return REJECT;
  }
  return out;
}
