import { SECRET_PLACEHOLDER, type Secret, valueForRedaction } from './secret.js';
import { visibleJson, visibleText } from './visible-text.js';

/**
 * The one redactor. Every text mpprov writes (terminal, JSON lines, the journal, usb.log, the
 * result file, state files) passes through a Redactor that knows the secrets of the moment, and
 * each exact secret value, and each form a program may have turned it into, becomes "(secret)":
 * - the value itself, and the value JSON-escaped (once, twice, and with non-ASCII as \uXXXX), as
 *   it stands inside JSON text or a JSON message inside JSON;
 * - URL-encoded: encodeURIComponent, the form encoding with '+' for spaces, lower-case escapes;
 * - base64 (padded, and unpadded for a copy cut short), base64url, hex in both cases;
 * - the value reversed (by code point), as a device may echo it to hide it from a filter.
 * Longest forms first, so a secret holding another secret is replaced whole. Nothing else: no word
 * of a secret is masked on its own, so other text stays as it was and says nothing about the
 * secret's parts. Secrets the redactor does not know (a device's own) are not its business.
 *
 * Short secrets, decided here once:
 * - shorter than MIN_SECRET_LENGTH (4) characters: not looked for at all. Such a value occurs in
 *   ordinary text all the time ("a", "eth"); masking it would garble every message and point at
 *   the secret wherever it did. The stick's validation warns about such a secret instead.
 * - a form shorter than ANYWHERE_LENGTH (8) characters is replaced only where it stands alone,
 *   with no letter or digit touching it on either side: `wrong key s3cr for eth1`, `"s3cr"` and
 *   `pw=s3cr&` are caught, `s3cret-file.pem` is not cut apart.
 * - longer forms are replaced wherever they occur, inside words too.
 */

export const MIN_SECRET_LENGTH = 4;
const ANYWHERE_LENGTH = 8;

interface Form {
  text: string;
  /** Undefined: replaced anywhere (plain split); else the pattern with letter/digit boundaries. */
  standalone: RegExp | undefined;
}

export class Redactor {
  /** Each known value with how many holders added it (a job adds its stick's secrets for its lifetime). */
  readonly #counts = new Map<string, number>();
  #forms: Form[] | undefined;

  constructor(secrets: Iterable<Secret> = []) {
    this.add(secrets);
  }

  /** Knows these secrets from now on; the returned function forgets them again (once). */
  add(secrets: Iterable<Secret>): () => void {
    const values = [...secrets].map(valueForRedaction).filter((v) => v.length >= MIN_SECRET_LENGTH);
    for (const value of values) this.#counts.set(value, (this.#counts.get(value) ?? 0) + 1);
    if (values.length > 0) this.#forms = undefined;
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      for (const value of values) {
        const left = (this.#counts.get(value) ?? 1) - 1;
        if (left <= 0) this.#counts.delete(value);
        else this.#counts.set(value, left);
      }
      if (values.length > 0) this.#forms = undefined;
    };
  }

  /**
   * The text with every known secret, in every form above, replaced by "(secret)". Matches are
   * found in the original text, and overlapping or touching matches become one placeholder: a
   * secret that itself contains "(secret)", or two secrets that overlap, leave no part visible.
   * A placeholder already in the text is left as it is.
   */
  text(text: string): string {
    const spans: [number, number][] = [];
    for (const form of this.#compiled()) {
      if (!text.includes(form.text)) continue;
      if (form.standalone === undefined) {
        for (let at = text.indexOf(form.text); at >= 0; at = text.indexOf(form.text, at + 1))
          spans.push([at, at + form.text.length]);
      } else {
        for (const match of text.matchAll(form.standalone)) spans.push([match.index, match.index + form.text.length]);
      }
    }
    if (spans.length === 0) return text;
    const placeholders = new Set<number>();
    for (let at = text.indexOf(SECRET_PLACEHOLDER); at >= 0; at = text.indexOf(SECRET_PLACEHOLDER, at + 1))
      placeholders.add(at);
    const kept = spans.filter(
      ([start, end]) => ![...placeholders].some((p) => start >= p && end <= p + SECRET_PLACEHOLDER.length),
    );
    if (kept.length === 0) return text;
    kept.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    let out = '';
    let cursor = 0;
    let [start, end] = kept[0] as [number, number];
    for (const [nextStart, nextEnd] of kept.slice(1)) {
      if (nextStart <= end) {
        end = Math.max(end, nextEnd);
        continue;
      }
      out += text.slice(cursor, start) + SECRET_PLACEHOLDER;
      cursor = end;
      [start, end] = [nextStart, nextEnd];
    }
    return out + text.slice(cursor, start) + SECRET_PLACEHOLDER + text.slice(end);
  }

  /** True when the text holds a known secret in any form: a source line that must not be shown. */
  holdsSecret(text: string): boolean {
    return this.text(text) !== text;
  }

  /**
   * A copy of plain data (objects, arrays) with every string redacted. Class instances are kept
   * as they are: a Secret prints "(secret)" itself, and an engine result's other objects hold no
   * text of their own.
   */
  value<T>(value: T): T {
    return this.#walk(value, new WeakSet()) as T;
  }

  /** JSON text of `value`, redacted as a whole (the JSON-escaped forms are caught there). */
  json(value: unknown, space?: number): string {
    return this.text(JSON.stringify(value, null, space));
  }

  #walk(node: unknown, seen: WeakSet<object>): unknown {
    if (typeof node === 'string') return this.text(node);
    if (node === null || typeof node !== 'object') return node;
    if (
      !Array.isArray(node) &&
      Object.getPrototypeOf(node) !== Object.prototype &&
      Object.getPrototypeOf(node) !== null
    )
      return node;
    if (seen.has(node)) return '(circular)';
    seen.add(node);
    if (Array.isArray(node)) return node.map((item) => this.#walk(item, seen));
    return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, this.#walk(item, seen)]));
  }

  #compiled(): Form[] {
    if (this.#forms !== undefined) return this.#forms;
    const texts = new Set<string>();
    for (const value of this.#counts.keys()) for (const form of secretForms(value)) texts.add(form);
    this.#forms = [...texts]
      .sort((a, b) => b.length - a.length || (a < b ? -1 : 1))
      .map((text) => ({
        text,
        standalone:
          text.length >= ANYWHERE_LENGTH
            ? undefined
            : new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(text)}(?![\\p{L}\\p{N}])`, 'gu'),
      }));
    return this.#forms;
  }
}

/** Every form of one value the redactor looks for (the value first). */
export function secretForms(value: string): string[] {
  if (value.length < MIN_SECRET_LENGTH) return [];
  const json = JSON.stringify(value).slice(1, -1);
  const uri = encodeURIComponent(value);
  const bytes = Buffer.from(value, 'utf8');
  const forms = [
    value,
    json,
    JSON.stringify(json).slice(1, -1),
    json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    // As outside text is shown (a device echoing it, in a line or in JSON): escaped before redaction.
    visibleText(value),
    visibleJson(json),
    uri,
    uri.replace(/%20/g, '+'),
    new URLSearchParams([['', value]]).toString().slice(1),
    uri.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
    bytes.toString('base64'),
    bytes.toString('base64').replace(/=+$/, ''),
    bytes.toString('base64url'),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    [...value].reverse().join(''),
  ];
  return [...new Set(forms)].filter((form) => form.length > 0);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
