import { isAlias, isMap, isScalar, isSeq, type Node, parse } from 'yaml';
import { STICK_SECRET_KEYS } from '../config/index.js';
import { formatKeyPath, type KeyPath, type Problem } from '../core/problem.js';
import { visibleText } from '../core/visible-text.js';
import type { InventoryMp, Variable } from './inventory.js';
import type { Template } from './load-template.js';
import { problemAt } from './place.js';
import { findPlaceholders, parseExpression, SECRET_PLACEMENT } from './placeholders.js';

/** Where a rendered value comes from: its template line, and the inventory variable it took, if any. */
export interface Origin {
  line: number;
  column: number;
  variable?: Variable;
}

/** A secret a template names, as the builder reads it: `--secrets-dir/NAME`, or why not. */
export type SecretLookup = (name: string) => { ok: true } | { ok: false; message: string; hint?: string };

export interface RenderedMp {
  value: Record<string, unknown>;
  /** By key path inside the MP (`interfaces.eth1.ipv4.address`). */
  origins: Map<string, Origin>;
  /** Secret names the MP's `*_file` keys take, each becoming `secrets/NAME` on the stick. */
  secrets: Set<string>;
  /** Files the MP names that are copied from the template's folder, with their key path. */
  files: { path: string; keyPath: string }[];
  problems: Problem[];
}

const FILE_KEYS = new Set(['ca_cert', 'client_cert', 'private_key']);
const SECRET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const SECRETS_FOLDER = 'secrets';

/**
 * One monitoring point from the template and an inventory MP (docs/rolling-out.md, "The template"):
 * the substitution works on the parsed YAML, so a whole-value `${var}` keeps its type, a null
 * leaves its key out, and every rendered key keeps the template line it came from. Never throws.
 */
export function renderMp(template: Template, mp: InventoryMp, index: number, lookupSecret: SecretLookup): RenderedMp {
  const origins = new Map<string, Origin>();
  const problems: Problem[] = [];
  const secrets = new Set<string>();
  const files: { path: string; keyPath: string }[] = [];
  const posOf = (node: Node | null | undefined): { line: number; column: number } => {
    const offset = node?.range?.[0] ?? 0;
    const { line, col } = template.lines.linePos(offset);
    return { line, column: col };
  };
  const fail = (node: Node | null | undefined, path: KeyPath, message: string, hint?: string, variable?: Variable) => {
    const pos = posOf(node);
    problems.push(
      problemAt(
        variable?.place ?? mp.place,
        `${visibleText(mp.name)}: ${message} (template ${template.file}:${pos.line}:${pos.column})`,
        hint,
        formatKeyPath(['monitoring_points', index, ...path]),
      ),
    );
  };

  const lookup = (name: string): Variable | undefined => mp.vars.get(name);

  /** A placeholder's value with its own type; `undefined` after a problem. */
  const evaluate = (
    expression: string,
    node: Node,
    path: KeyPath,
  ): { value: unknown; variable?: Variable; secret?: string } | undefined => {
    const parsed = parseExpression(expression);
    if (parsed.kind === 'invalid') {
      fail(node, path, parsed.message);
      return undefined;
    }
    if (parsed.kind === 'secret') {
      const name = substituteText(parsed.name, node, path);
      if (name === undefined) return undefined;
      if (!SECRET_NAME.test(name)) {
        fail(
          node,
          path,
          `the secret name '${visibleText(name)}' is not a file name`,
          'a secret name is letters, digits, ., _ and -',
        );
        return undefined;
      }
      const found = lookupSecret(name);
      if (!found.ok) {
        fail(node, path, found.message, found.hint);
        return undefined;
      }
      return { value: `${SECRETS_FOLDER}/${name}`, secret: name };
    }
    const variable = lookup(parsed.name);
    if (variable !== undefined) return { value: variable.value, variable };
    if (parsed.fallback !== undefined) {
      try {
        return { value: parse(parsed.fallback, { logLevel: 'error' }) as unknown };
      } catch {
        fail(node, path, `the default of \${${parsed.name}:-...} is not YAML`);
        return undefined;
      }
    }
    fail(
      node,
      path,
      `\${${parsed.name}} is not set for this monitoring point`,
      `set ${parsed.name} in the inventory (the MP, its site's vars or defaults), or give a default: \${${parsed.name}:-VALUE}`,
    );
    return undefined;
  };

  /** `${...}`s inside a longer text, each replaced by its value's text. */
  const substituteText = (
    text: string,
    node: Node,
    path: KeyPath,
    found?: { variable?: Variable },
  ): string | undefined => {
    const scanned = findPlaceholders(text);
    if (!scanned.ok) {
      fail(node, path, scanned.message);
      return undefined;
    }
    let out = '';
    let last = 0;
    for (const placeholder of scanned.found) {
      if (parseExpression(placeholder.expression).kind === 'secret') {
        fail(node, path, SECRET_PLACEMENT.message, SECRET_PLACEMENT.hint);
        return undefined;
      }
      const evaluated = evaluate(placeholder.expression, node, path);
      if (evaluated === undefined) return undefined;
      if (found !== undefined && found.variable === undefined && evaluated.variable !== undefined)
        found.variable = evaluated.variable;
      const value = evaluated.value;
      if (value !== null && typeof value === 'object') {
        fail(
          node,
          path,
          `\${${placeholder.expression}} is a list or mapping; inside a longer text only text, numbers and booleans fit`,
          undefined,
          evaluated.variable,
        );
        return undefined;
      }
      out += text.slice(last, placeholder.start) + textOf(value);
      last = placeholder.end;
    }
    return out + text.slice(last);
  };

  const renderScalar = (text: string, node: Node, path: KeyPath): unknown => {
    const key = path.at(-1);
    const isFileKey =
      typeof key === 'string' &&
      (key.endsWith('_file') || FILE_KEYS.has(key) || (key === 'ca' && path.at(-2) === 'tls'));
    const scanned = findPlaceholders(text);
    const whole =
      scanned.ok && scanned.found.length === 1 && scanned.found[0]?.start === 0 && scanned.found[0].end === text.length;
    let value: unknown;
    let variable: Variable | undefined;
    if (whole) {
      const expression = (scanned.found[0] as { expression: string }).expression;
      const isSecret = parseExpression(expression).kind === 'secret';
      if (isSecret && !(typeof key === 'string' && key.endsWith('_file'))) {
        fail(node, path, SECRET_PLACEMENT.message, SECRET_PLACEMENT.hint);
        return undefined;
      }
      const evaluated = evaluate(expression, node, path);
      if (evaluated === undefined) return undefined;
      variable = evaluated.variable;
      value = evaluated.value;
      if (evaluated.secret !== undefined) {
        secrets.add(evaluated.secret);
        origins.set(formatKeyPath(path), { ...posOf(node), ...(variable === undefined ? {} : { variable }) });
        return value;
      }
      if (path.length === 1 && key === 'paths') value = pathTargets(value);
    } else {
      const found: { variable?: Variable } = {};
      value = substituteText(text, node, path, found);
      variable = found.variable;
      if (value === undefined) return undefined;
    }
    origins.set(formatKeyPath(path), { ...posOf(node), ...(variable === undefined ? {} : { variable }) });
    if (isFileKey && typeof value === 'string') files.push({ path: value, keyPath: formatKeyPath(path) });
    return value;
  };

  /**
   * A mapping key is a scalar too: `${uplink}:` names the interface from the inventory. Only text
   * fits a key; a secret never (it would stand in the stick as a key, in clear), and neither a key
   * the stick takes a secret under by value, which checkTemplate refuses when it is written out.
   */
  const renderKey = (keyNode: unknown, path: KeyPath, taken: Record<string, unknown>): string | undefined => {
    const written = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
    if (!isScalar(keyNode) || typeof keyNode.value !== 'string' || !keyNode.value.includes('${')) return written;
    const scanned = findPlaceholders(written);
    if (scanned.ok && scanned.found.some((p) => parseExpression(p.expression).kind === 'secret')) {
      fail(keyNode, [...path, written], SECRET_PLACEMENT.message, SECRET_PLACEMENT.hint);
      return undefined;
    }
    const key = substituteText(written, keyNode, [...path, written]);
    if (key === undefined) return undefined;
    const problem =
      key === ''
        ? `the key ${written} is empty for this monitoring point`
        : STICK_SECRET_KEYS.has(key)
          ? `the key ${written} becomes '${key}', a secret: a template names its file, never its value`
          : Object.hasOwn(taken, key)
            ? `the key ${written} becomes '${key}', which this mapping already has`
            : undefined;
    if (problem === undefined) return key;
    fail(keyNode, [...path, written], problem);
    return undefined;
  };

  const renderNode = (node: unknown, path: KeyPath): unknown => {
    if (node === null || node === undefined) return null;
    if (isAlias(node)) {
      fail(node, path, 'a template may not use YAML aliases (*name)');
      return undefined;
    }
    if (isMap(node)) {
      origins.set(formatKeyPath(path), posOf(node));
      const out: Record<string, unknown> = {};
      for (const item of node.items) {
        const key = renderKey(item.key, path, out);
        if (key === undefined) continue;
        const value = renderNode(item.value, [...path, key]);
        // Defined, not assigned: `__proto__: ...` set by `=` would become the object's prototype
        // and vanish from the stick unsaid; as an own key the validator names it.
        if (value !== null && value !== undefined)
          Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    if (isSeq(node)) {
      origins.set(formatKeyPath(path), posOf(node));
      const out: unknown[] = [];
      for (const item of node.items) {
        const value = renderNode(item, [...path, out.length]);
        if (value !== null && value !== undefined) out.push(value);
      }
      return out;
    }
    if (isScalar(node)) {
      if (typeof node.value === 'string') return renderScalar(node.value, node, path);
      origins.set(formatKeyPath(path), posOf(node));
      return node.value;
    }
    return null;
  };

  const value = renderNode(template.doc.contents, []) as Record<string, unknown>;
  return { value, origins, secrets, files, problems };
}

/** `paths: ${var}` with a list of text (or one text) is the MP's paths, one `{target}` each. */
function pathTargets(value: unknown): unknown {
  if (typeof value === 'string') return value === '' ? null : [{ target: value }];
  if (Array.isArray(value) && value.every((item) => typeof item === 'string'))
    return value.map((target) => ({ target }));
  return value;
}

/** A scalar's text inside a longer string: null is empty. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return '';
}
