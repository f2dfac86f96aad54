import { z } from 'zod';

/**
 * zod schemas whose messages are the predicate of a sentence ("must be ...", "is required");
 * `describeIssues` puts the field's name in front, so every 400 of the device names the field.
 */

type Issue = z.core.$ZodRawIssue;

/** "is required" when the field is missing, else "must be WHAT". */
export function expect(what: string): { error: (issue: Issue) => string } {
  return { error: (issue) => (issue.input === undefined ? 'is required' : `must be ${what}`) };
}

export const text = (what = 'a string') => z.string(expect(what));
export const nonEmpty = (what = 'a non-empty string') => z.string(expect(what)).min(1, expect(what));
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(
    values,
    expect(
      values
        .map((v) => `"${v}"`)
        .join(', ')
        .replace(/, ([^,]*)$/, ' or $1'),
    ),
  );
export const integer = (min: number, max: number, what: string) =>
  z.int(expect(what)).min(min, expect(what)).max(max, expect(what));
export const list = <T extends z.ZodType>(item: T, what: string) => z.array(item, expect(what));

/** Field names as `routes[0].gateway`, the way the 400 sentence names them. */
function formatFieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** The sentence of the first problem; unknown fields come first, as the model lists that rule first. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const unknown = issues.find((i) => i.code === 'unrecognized_keys');
  const first = unknown ?? issues[0];
  if (first === undefined) return 'Request body is invalid.';
  if (first.code === 'unrecognized_keys') {
    const key = first.keys[0] ?? '';
    return `Unknown field "${formatFieldPath([...first.path, key])}".`;
  }
  return `Field "${formatFieldPath(first.path)}" ${first.message}.`;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

export function parseWith<T>(schema: z.ZodType<T>, body: unknown): ParseResult<T> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, error: 'Request body must be a JSON object.' };
  }
  const result = schema.safeParse(body);
  return result.success ? { ok: true, value: result.data } : { ok: false, error: describeIssues(result.error.issues) };
}
