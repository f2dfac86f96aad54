import type { z } from 'zod';

/**
 * Checking a device answer against a zod schema. A mismatch becomes a ShapeProblem whose text
 * names the field (`interfaces[0].name: expected string, received number`); the request layer
 * turns it into a DeviceResponseError naming the operation.
 */

export class ShapeProblem extends Error {
  override readonly name = 'ShapeProblem';
}

/** Parses `value`; `at` prefixes field paths when the value sits inside a larger answer. */
export function parseWire<T extends z.ZodType>(schema: T, value: unknown, at: readonly PropertyKey[] = []): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ShapeProblem(describeIssues(result.error.issues, at));
}

const SHOWN_ISSUES = 3;

function describeIssues(issues: readonly z.core.$ZodIssue[], at: readonly PropertyKey[]): string {
  const shown = issues.slice(0, SHOWN_ISSUES).map((issue) => {
    const path = fieldPath([...at, ...issue.path]);
    // zod says "Invalid input: expected string, received number"; the field path already says where.
    return `${path === '' ? 'the body' : path}: ${issue.message.replace(/^Invalid input: /, '')}`;
  });
  const more = issues.length > SHOWN_ISSUES ? ` (and ${issues.length - SHOWN_ISSUES} more)` : '';
  return `${shown.join('; ')}${more}`;
}

/** `interfaces[0].families.inet.mtu` */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}
