import { formatKeyPath, type Problem, Severity } from '../core/problem.js';
import { closestWordFinder, readsAs } from './did-you-mean.js';
import { keyPathAtOffset, type YamlSource } from './yaml-source.js';

/**
 * Where the text writes a secret's value, as the person wrote it, whatever YAML made of it. When
 * the YAML around a password is broken (an unquoted ", " in a flow map, ": " inside it, a value
 * wrapped onto the next line), parts of it turn up as keys, parser messages or other values; a
 * problem located inside such a stretch could quote them. Positions, not words: a problem found
 * inside a secret's stretch is replaced by one sentence about that secret, and its source line is
 * never shown. The secret keys themselves come from the schema (schema-roles.ts).
 */
export interface SecretSpan {
  key: string;
  /** Key path of the secret, e.g. `monitoring_points[0].password`. */
  path: string;
  /** 1-based line and column of the value's first character (just after the colon). */
  start: { line: number; column: number };
  /** The last line of the value as written, and the column of its last character. */
  end: { line: number; column: number };
}

/*
 * Keys are matched in any script: a key written with look-alike letters (`pаsswоrd` with a
 * Cyrillic а and о, a full-width `ｐassword`) reads as a secret key to the person who wrote it.
 */
/*
 * Invisible characters (`pass\u200bword`, a soft hyphen, a tag character) are part of a key as
 * written: the person sees `password`, so the pattern must not stop at them.
 */
/** A line that is a key of its own (`  name: x`, `- url: y`), so it does not continue a value. */
const KEY_LINE = /^\s*(?:-\s+)?["']?[\p{L}\p{M}\p{N}\p{Default_Ignorable_Code_Point}_.-]+["']?\s*:(?:\s|$)/u;
/** The next `, key:` ends a value inside a flow map `{ ... }`. */
const NEXT_FLOW_KEY =
  /,\s*["']?[\p{L}\p{Default_Ignorable_Code_Point}_][\p{L}\p{M}\p{N}\p{Default_Ignorable_Code_Point}_-]*["']?\s*:(?:\s|$)/u;

/**
 * An unknown key named like a secret (`pw:`, `pass:`, `admin_password:`, `api_token:`,
 * `wifi_psk:`): no schema key is close enough for "did you mean", but what follows it was
 * written as a secret all the same. Tested as the key reads.
 */
const SECRET_NAME = /^(?:pw|pwd|pass)$|passw|passphrase|secret|token|psk|private_?key/;

/**
 * Whether what follows a key was written as a secret: a key of `keys`, a key close enough to one
 * that "did you mean" would point at it (`pasword`), or, with `knownKeys` (every key the schema
 * knows), a key outside them named like a secret (SECRET_NAME). Cached by key name: a large file
 * repeats a few dozen names thousands of times.
 */
export function secretKeyTest(keys: ReadonlySet<string>, knownKeys?: ReadonlySet<string>): (key: string) => boolean {
  const closest = closestWordFinder([...keys]);
  const decided = new Map<string, boolean>();
  return (key) => {
    let secret = decided.get(key);
    if (secret === undefined) {
      secret =
        keys.has(key) ||
        closest(key) !== undefined ||
        (knownKeys !== undefined && !knownKeys.has(key) && SECRET_NAME.test(readsAs(key)));
      decided.set(key, secret);
    }
    return secret;
  };
}

/**
 * `knownKeys`, when given, are every key the schema knows: a key outside them named like a secret
 * (SECRET_NAME) is taken as one. Known keys such as `password_file` hold no secret themselves.
 */
export function findSecretSpans(
  source: YamlSource,
  keys: ReadonlySet<string>,
  knownKeys?: ReadonlySet<string>,
): SecretSpan[] {
  if (keys.size === 0) return [];
  // Any key, maybe quoted, at the start of a line, after "- ", "{" or ",": then its colon. Which
  // keys count is secretKeyTest's: a misspelt secret key (`pasword:`) too, since what follows it
  // was meant as a secret all the same.
  const keyPattern =
    /(^|[\s{,])(["']?)([\p{L}\p{Default_Ignorable_Code_Point}_][\p{L}\p{M}\p{N}\p{Default_Ignorable_Code_Point}_-]*)\2\s*:(?=\s|$)/gu;
  const secretKey = secretKeyTest(keys, knownKeys);
  const lines = source.text.split('\n');
  const lineStarts: number[] = [];
  let offset = 0;
  for (const line of lines) {
    lineStarts.push(offset);
    offset += line.length + 1;
  }

  const spans: SecretSpan[] = [];
  for (const [index, raw] of lines.entries()) {
    const line = raw.replace(/\r$/, '');
    if (line.trimStart().startsWith('#')) continue;
    for (const match of line.matchAll(keyPattern)) {
      const key = match[3] ?? '';
      if (!secretKey(key)) continue;
      const keyColumn = (match.index ?? 0) + (match[1] ?? '').length;
      const valueColumn = (match.index ?? 0) + match[0].length;
      const flow = /[{,]\s*$/.test(line.slice(0, keyColumn));
      const rest = line.slice(valueColumn);
      const cut = flow ? NEXT_FLOW_KEY.exec(rest) : null;
      let end = { line: index + 1, column: cut === null ? line.length : valueColumn + cut.index };
      if (cut === null) {
        // Lines that continue the value: more indented than the key's line, and not keys themselves.
        const indent = line.search(/\S/);
        for (let next = index + 1; next < lines.length; next++) {
          const text = (lines[next] ?? '').replace(/\r$/, '');
          if (text.trim() === '') continue;
          if (text.search(/\S/) <= indent || KEY_LINE.test(text)) break;
          end = { line: next + 1, column: text.length };
        }
      }
      const path = [...keyPathAtOffset(source.document, (lineStarts[index] ?? 0) + keyColumn)];
      if (path[path.length - 1] !== key) path.push(key);
      spans.push({ key, path: formatKeyPath(path), start: { line: index + 1, column: valueColumn + 1 }, end });
    }
  }
  return spans;
}

/** C0 control bytes but the tab, and DEL: never part of a value as a person wrote it. */
// eslint-disable-next-line no-control-regex -- matching control bytes is the point
const CONTROL_BYTES = /[\u0000-\u0008\u000a-\u001f\u007f]/g;

/**
 * Each line's piece of every secret as written, quotes trimmed: what the redactor must know
 * beside the values YAML read. When the YAML is broken no value was read, and error recovery
 * makes keys of stretches that run from a password into the next line; a valid file can hold a
 * password inside a collection used as a key. A problem's key path or message would quote them;
 * positions cannot catch a path, the redactor can.
 */
export function writtenSecretPieces(text: string, spans: readonly SecretSpan[]): string[] {
  const lines = text.split('\n');
  const pieces: string[] = [];
  for (const span of spans) {
    for (let line = span.start.line; line <= span.end.line; line++) {
      const shown = (lines[line - 1] ?? '').replace(/\r$/, '');
      const from = line === span.start.line ? span.start.column - 1 : 0;
      const to = line === span.end.line ? span.end.column : shown.length;
      // Control bytes (a NUL after the closing quote) are not part of what the parser may quote.
      const written = shown.slice(from, to).replace(CONTROL_BYTES, '').trim();
      const piece = written.replace(/^["']+|["']+$/g, '').trim();
      if (piece !== '') pieces.push(piece);
      // A quoted value with something after its closing quote: the parser reads the quoted part alone.
      const quoted = /^(["'])(.+?)\1/.exec(written)?.[2]?.trim();
      if (quoted !== undefined && quoted !== '' && quoted !== piece) pieces.push(quoted);
    }
  }
  return pieces;
}

function inSpan(span: SecretSpan, line: number, column: number): boolean {
  const afterStart = line > span.start.line || (line === span.start.line && column >= span.start.column);
  const beforeEnd = line < span.end.line || (line === span.end.line && column <= span.end.column);
  return afterStart && beforeEnd;
}

/** True when the line holds any part of a secret's value as written. */
export function lineHoldsSecret(spans: readonly SecretSpan[], line: number): boolean {
  return spans.some((s) => line >= s.start.line && line <= s.end.line);
}

/**
 * Problems found inside a secret's stretch are about pieces of it that YAML took for something
 * else: each becomes one sentence about the secret, at the secret's own path, quoting nothing.
 * Our own sentences about the secret key itself (its path is the span's) quote no value and stay,
 * unless they come from the YAML parser (`fromParser`), whose wording we do not control.
 */
export function maskSecretSpans(
  problems: readonly Problem[],
  spans: readonly SecretSpan[],
  fromParser: boolean,
): Problem[] {
  if (spans.length === 0) return [...problems];
  const out: Problem[] = [];
  const masked = new Set<SecretSpan>();
  const kept: Problem[] = [];
  for (const problem of problems) {
    const span = spans.find((s) => inSpan(s, problem.line, problem.column));
    if (span === undefined || (!fromParser && problem.path === span.path)) {
      out.push(problem);
      kept.push(problem);
      continue;
    }
    if (masked.has(span)) continue;
    masked.add(span);
    out.push({
      severity: Severity.Error,
      file: problem.file,
      line: span.start.line,
      column: span.start.column,
      path: span.path,
      message: `YAML reads part of this ${span.key} as syntax, so it is not one text value`,
      hint: `put the whole ${span.key} in single quotes ('...'), doubling any ' inside it`,
    });
  }
  // A rule judged the piece YAML kept of a broken-apart secret, not the secret written: not said.
  const broken = new Set([...masked].map((span) => span.path));
  return out.filter((problem) => !(kept.includes(problem) && broken.has(problem.path)));
}
