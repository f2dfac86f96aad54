import { z } from 'zod';
import { didYouMean } from './did-you-mean.js';
import { type KeyPath, Severity, type UnplacedProblem } from '../core/problem.js';
import { roleOf, SchemaRole, schemaAt } from './schema-roles.js';

/**
 * Turns zod's issues into problems a field technician can act on: one sentence, a hint, and the
 * key path. Values are quoted back only where the schema says the key can never hold a secret.
 */

export function problemsFromZod(error: z.ZodError, data: unknown, schema: z.ZodType): UnplacedProblem[] {
  return error.issues.flatMap((issue) => fromIssue(issue, data, schema));
}

function fromIssue(issue: z.core.$ZodIssue, data: unknown, schema: z.ZodType): UnplacedProblem[] {
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  const value = valueAt(data, path);
  const key = path[path.length - 1];
  const secret = roleOf(schemaAt(schema, path)) === SchemaRole.Secret;
  const problem = (message: string, hint?: string, extra?: Partial<UnplacedProblem>): UnplacedProblem => ({
    severity: Severity.Error,
    path,
    message,
    ...(hint === undefined ? {} : { hint }),
    ...extra,
  });

  switch (issue.code) {
    case 'invalid_type': {
      if (value === undefined) {
        return [problem(`missing required key '${String(key)}'`, `add ${String(key)}: to this block`)];
      }
      if (value === null) {
        // A list entry has an index, not a key: "'1' is empty" would name a key nobody wrote.
        if (typeof key === 'number')
          return [problem('this list entry is empty', 'give it a value, or remove the - line')];
        return [problem(`'${String(key)}' is empty`, 'give it a value, or remove the key')];
      }
      if (typeof value === 'number' && !Number.isFinite(value))
        return [problem('is too large a number', 'write a number in the allowed range')];
      return [
        problem(`must be ${article(issue.expected)}, not ${article(kindOf(value))}`, typeHint(issue.expected, value)),
      ];
    }
    case 'unrecognized_keys': {
      const known = knownKeysAt(schema, path);
      return issue.keys.map((unknownKey) => {
        const suggestion = didYouMean(unknownKey, known);
        const hint =
          suggestion !== undefined ? `did you mean '${suggestion}'?` : `keys allowed here: ${known.join(', ')}`;
        return problem(`unknown key '${unknownKey}'`, hint, { path: [...path, unknownKey], atKey: true });
      });
    }
    case 'invalid_value': {
      if (path.length === 1 && key === 'version') {
        if (value === undefined) return [problem("missing required key 'version'", 'add version: 1 as the first line')];
        return [
          problem(
            `version ${versionText(value)} is not supported; this build of mpprov reads version ${issue.values.join(', ')}`,
            'write version: 1, or use a newer mpprov',
          ),
        ];
      }
      const allowed = issue.values.map(String);
      const shown = secret ? '' : `${JSON.stringify(value)} `;
      const suggestion = typeof value === 'string' ? didYouMean(value, allowed) : undefined;
      let hint = suggestion !== undefined ? `did you mean '${suggestion}'?` : undefined;
      if (key === 'method' && value === 'auto') hint = 'auto (SLAAC) exists only for ipv6; use dhcp for IPv4';
      return [problem(`${shown}is not one of: ${allowed.join(', ')}`, hint)];
    }
    case 'too_small':
    case 'too_big':
      return [problem(sizeMessage(issue), sizeHint(issue))];
    case 'invalid_union': {
      if (key === 'ports') return [problem('must be a port or a port range', 'write it like "8443" or "8000-8100"')];
      return [problem(`has the wrong type (${kindOf(value)})`)];
    }
    case 'custom': {
      // A value with a line break or control character is quoted escaped, as JSON writes it: the
      // sentence stays one line wherever it is shown.
      // eslint-disable-next-line no-control-regex
      const controls = typeof value === 'string' && /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(value);
      const quoted = controls ? JSON.stringify(value) : `'${String(value)}'`;
      const shown = typeof value === 'string' && !secret ? `${quoted} ` : '';
      const hint = typeof issue.params?.hint === 'string' ? issue.params.hint : undefined;
      return [problem(`${shown}${issue.message}`, hint)];
    }
    default:
      return [problem(issue.message)];
  }
}

function sizeMessage(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig): string {
  const small = issue.code === 'too_small';
  const bound = Number(small ? issue.minimum : issue.maximum);
  switch (issue.origin) {
    case 'string':
      return small && bound === 1
        ? 'must not be empty'
        : `must be ${small ? 'at least' : 'at most'} ${bound} characters long`;
    case 'array':
      return `needs ${small ? 'at least' : 'at most'} ${bound} ${bound === 1 ? 'entry' : 'entries'}`;
    default:
      if (issue.inclusive === false) return `must be ${small ? 'more' : 'less'} than ${bound}`;
      return `must be ${small ? 'at least' : 'at most'} ${bound}`;
  }
}

function sizeHint(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig): string | undefined {
  const small = issue.code === 'too_small';
  const bound = Number(small ? issue.minimum : issue.maximum);
  if (issue.origin === 'array') return small ? 'add an entry' : 'remove entries';
  if (issue.origin === 'string') return small ? 'give it a value' : 'shorten it';
  if (issue.inclusive === false) return small ? `use a number above ${bound}` : `use a number below ${bound}`;
  return small ? `use ${bound} or more` : `use ${bound} or less`;
}

function typeHint(expected: string, value: unknown): string | undefined {
  if (expected === 'string' && (typeof value === 'number' || typeof value === 'boolean')) {
    return 'put the value in quotes so YAML reads it as text';
  }
  if (expected === 'boolean' && typeof value === 'string') return 'write true or false, without quotes';
  if (expected === 'number' && typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value))) {
    return 'remove the quotes around the number';
  }
  if (expected === 'object' && Array.isArray(value)) return 'write a block of keys here, not a list';
  if (expected === 'array' && typeof value !== 'object') return 'write a list here, e.g. [a, b]';
  return undefined;
}

/** A version as written: a quoted string, a number as is, a list or block by its kind (never "[object Object]"). */
function versionText(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'object' && value !== null) return kindOf(value);
  // What is left from YAML: a number, true/false or null.
  return String(value);
}

function kindOf(value: unknown): string {
  if (value === null) return 'empty value';
  if (value instanceof Uint8Array) return 'binary (!!binary) value';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'object') return 'block of keys';
  if (typeof value === 'number') return Number.isInteger(value) ? 'whole number' : 'number';
  return typeof value === 'boolean' ? 'true/false value' : 'text';
}

function article(kind: string): string {
  const names: Record<string, string> = {
    string: 'text',
    number: 'number',
    int: 'whole number',
    boolean: 'true/false value',
    object: 'block of keys',
    array: 'list',
  };
  const name = names[kind] ?? kind;
  if (name === 'text') return name;
  return /^[aeiou]/.test(name) ? `an ${name}` : `a ${name}`;
}

function valueAt(data: unknown, path: KeyPath): unknown {
  let node: unknown = data;
  for (const part of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[part];
  }
  return node;
}

/** The keys an object schema allows at `path`, walking through optionals, arrays and records. */
function knownKeysAt(schema: z.ZodType, path: KeyPath): string[] {
  const current = schemaAt(schema, path);
  return current instanceof z.ZodObject ? Object.keys(current.shape) : [];
}
