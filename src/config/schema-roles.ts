import { z } from 'zod';
import type { KeyPath } from '../core/problem.js';
import { Secret } from '../core/secret.js';

/**
 * What a key of a configuration schema holds, beyond its type: a secret, a file whose content is
 * a secret, or a credential file (certificate or key) to be read and checked. The schemas say it
 * once, through the builders below, and every other place asks the schema: which keys are secret
 * (for the problem sentences and the source-line rule), which files to read, where secrets sit.
 * A registry of its own rather than .meta(): metadata would leak into the JSON Schema editors see.
 */

export const SchemaRole = { Secret: 'secret', SecretFile: 'secret-file', CredentialFile: 'credential-file' } as const;
export type SchemaRole = (typeof SchemaRole)[keyof typeof SchemaRole];

const roles = z.registry<{ role: SchemaRole }>();

/**
 * A secret written inline: text of at least one character, turned into a Secret as it is read,
 * so no later stage ever holds it as a string. (`mpprov schema` still describes it as a string:
 * the JSON Schema is of the input.)
 */
export function secretString() {
  const schema = z
    .string()
    .min(1)
    .transform((value) => new Secret(value));
  roles.add(schema, { role: SchemaRole.Secret });
  return schema;
}

/** `<secret key>_file`: a file, relative to the configuration's folder, whose content is that secret. */
export function secretFile(description: string) {
  const schema = z.string().min(1).describe(description);
  roles.add(schema, { role: SchemaRole.SecretFile });
  return schema;
}

/** A certificate or key file, relative to the configuration's folder, read once and checked. */
export function credentialFile(description: string) {
  const schema = z.string().min(1).describe(description);
  roles.add(schema, { role: SchemaRole.CredentialFile });
  return schema;
}

/** The secret a `_file` key stands for: `password_file` -> `password`. */
export function secretKeyOfFile(fileKey: string): string {
  return fileKey.replace(/_file$/, '');
}

/** The role of a schema, through optional, nullable and default wrappers. */
export function roleOf(schema: z.ZodType | undefined): SchemaRole | undefined {
  const inner = unwrap(schema);
  return inner === undefined ? undefined : roles.get(inner)?.role;
}

/** The names of every key that holds an inline secret, anywhere in `schema`. */
export function secretKeysOf(schema: z.ZodType): ReadonlySet<string> {
  return keysOf(schema, (value) => roleOf(value) === SchemaRole.Secret);
}

/** The names of every key `schema` knows, anywhere in it, or of those whose schema passes `which`. */
export function keysOf(schema: z.ZodType, which: (value: z.ZodType) => boolean = () => true): ReadonlySet<string> {
  const keys = new Set<string>();
  const seen = new Set<z.ZodType>();
  const visit = (node: z.ZodType | undefined): void => {
    const inner = unwrap(node);
    if (inner === undefined || seen.has(inner)) return;
    seen.add(inner);
    if (inner instanceof z.ZodObject) {
      const shape: Record<string, z.ZodType> = inner.shape;
      for (const [key, value] of Object.entries(shape)) {
        if (which(value)) keys.add(key);
        visit(value);
      }
    } else if (inner instanceof z.ZodArray) visit(inner.element as z.ZodType);
    else if (inner instanceof z.ZodRecord) visit(inner.valueType as z.ZodType);
  };
  visit(schema);
  return keys;
}

/** The schema that describes the value at `path`, walking through objects, arrays and records. */
export function schemaAt(schema: z.ZodType, path: KeyPath): z.ZodType | undefined {
  let current = unwrap(schema);
  for (const part of path) {
    if (current instanceof z.ZodObject) current = unwrap((current.shape as Record<string, z.ZodType>)[String(part)]);
    else if (current instanceof z.ZodArray) current = unwrap(current.element as z.ZodType);
    else if (current instanceof z.ZodRecord) current = unwrap(current.valueType as z.ZodType);
    else return undefined;
  }
  return current;
}

export interface SchemaBlock {
  /** The data's object at `path` (the raw data or the parsed model, as given). */
  block: Record<string, unknown>;
  /** Its keys' schemas. */
  shape: Record<string, z.ZodType>;
  path: KeyPath;
}

/**
 * Every object of `data` that `schema` describes as an object, with its shape: the loader finds
 * secrets and files to read by asking each key's role. Data of the wrong shape is skipped, so this
 * works on raw, partly invalid data too.
 */
export function* schemaBlocks(schema: z.ZodType, data: unknown, path: KeyPath = []): Generator<SchemaBlock> {
  const inner = unwrap(schema);
  if (data === null || typeof data !== 'object') return;
  if (inner instanceof z.ZodObject && !Array.isArray(data)) {
    const shape = inner.shape as Record<string, z.ZodType>;
    const block = data as Record<string, unknown>;
    yield { block, shape, path };
    for (const [key, value] of Object.entries(shape)) yield* schemaBlocks(value, block[key], [...path, key]);
  } else if (inner instanceof z.ZodArray && Array.isArray(data)) {
    for (const [index, item] of data.entries()) yield* schemaBlocks(inner.element as z.ZodType, item, [...path, index]);
  } else if (inner instanceof z.ZodRecord && !Array.isArray(data)) {
    for (const [key, item] of Object.entries(data))
      yield* schemaBlocks(inner.valueType as z.ZodType, item, [...path, key]);
  }
}

/** The schema inside optional, nullable and default wrappers. */
export function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodDefault || current instanceof z.ZodNullable) {
    current = current.unwrap() as z.ZodType;
  }
  return current;
}
