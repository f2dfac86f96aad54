import { z } from 'zod';
import { type KeyPath, Severity, type UnplacedProblem } from '../core/problem.js';
import { unwrap } from './schema-roles.js';
import { problemsFromZod } from './zod-issues.js';

/** The one key a map entry may not have: zod's record drops it (see below), JavaScript objects treat it apart. */
const PROTO = '__proto__';

/**
 * zod's record skips an own key named `__proto__` without a word (it keeps the objects it builds
 * safe from prototype pollution), so an interface of that name vanished, unchecked, and its stick
 * was "valid". Every map of the data is walked beside its schema: such a key is a problem at the
 * key, and its value is judged by the map's value schema like any other entry's. An object
 * schema reports the key as unknown itself; other names (`constructor`, `toString`) reach zod as
 * ordinary keys.
 */
export function mapKeyProblems(schema: z.ZodType, data: unknown): UnplacedProblem[] {
  const problems: UnplacedProblem[] = [];
  const walk = (node: z.ZodType | undefined, value: unknown, path: KeyPath): void => {
    const inner = unwrap(node);
    if (value === null || typeof value !== 'object') return;
    if (inner instanceof z.ZodArray && Array.isArray(value)) {
      for (const [index, item] of value.entries()) walk(inner.element as z.ZodType, item, [...path, index]);
    } else if (inner instanceof z.ZodObject && !Array.isArray(value)) {
      const shape: Record<string, z.ZodType> = inner.shape;
      for (const [key, child] of Object.entries(shape))
        if (Object.hasOwn(value, key)) walk(child, (value as Record<string, unknown>)[key], [...path, key]);
    } else if (inner instanceof z.ZodRecord && !Array.isArray(value)) {
      const valueType = inner.valueType as z.ZodType;
      for (const [key, item] of Object.entries(value)) {
        if (key === PROTO) problems.push(...protoEntry(schema, data, valueType, item, [...path, key]));
        walk(valueType, item, [...path, key]);
      }
    }
  };
  walk(schema, data, []);
  return problems;
}

function protoEntry(
  root: z.ZodType,
  data: unknown,
  valueType: z.ZodType,
  value: unknown,
  path: KeyPath,
): UnplacedProblem[] {
  const named: UnplacedProblem = {
    severity: Severity.Error,
    path,
    message: `'${PROTO}' cannot name an entry here: JavaScript gives every object a key of that name`,
    hint: 'rename this entry',
    atKey: true,
  };
  const checked = valueType.safeParse(value);
  if (checked.success) return [named];
  // Placed and worded like every other schema problem: paths from the document's root.
  const issues = checked.error.issues.map((issue) => ({ ...issue, path: [...path, ...issue.path] }));
  return [named, ...problemsFromZod(new z.ZodError(issues), data, root)];
}
