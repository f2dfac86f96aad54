/**
 * Text from outside (a stick, its label, a device, the service) is data: printed raw, a newline in
 * a name forges a log line, ESC and OSC sequences rewrite a terminal, a bidi control reorders what
 * a technician reads. Every such character is shown as a visible escape instead.
 *
 * Escaped: C0 controls except tab, DEL, C1 controls, the bidi controls (U+061C, U+200E, U+200F,
 * U+202A-U+202E, U+2066-U+2069), the line and paragraph separators U+2028, U+2029, and every
 * default-ignorable code point (soft hyphen, zero-width space and joiners, U+2060-U+2064, U+FEFF,
 * variation selectors, tags): a terminal draws them as nothing, so a secret with U+200B between its
 * characters would read as the plain secret while no redactor finds it. Tab stays:
 * it breaks no line and moves no cursor beyond its own line. A backslash from the data is kept as
 * it is, so escaping twice changes nothing (the function is idempotent) and a text can pass the
 * composer and then the sink without `\\x1b` growing.
 */

const UNSAFE =
  // eslint-disable-next-line no-control-regex -- matching control characters is this module's purpose
  /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\p{Default_Ignorable_Code_Point}]/gu;

/** Characters JSON.stringify leaves raw although they are controls: DEL, C1, bidi, U+2028/U+2029, invisibles. */
const UNSAFE_IN_JSON =
  /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\p{Default_Ignorable_Code_Point}]/gu;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r' };

const hex = (code: number, width: number): string => code.toString(16).padStart(width, '0');

/** `\x1b`, `\u200b`, or for a code point beyond U+FFFF (a tag character) `\u{e0041}`. */
function escapeOne(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.codePointAt(0) ?? 0;
  if (code <= 0xff) return `\\x${hex(code, 2)}`;
  return code <= 0xffff ? `\\u${hex(code, 4)}` : `\\u{${hex(code, 0)}}`;
}

/** JSON's own escape: one `\uXXXX` per UTF-16 unit, so a tag character becomes its surrogate pair. */
function jsonEscape(char: string): string {
  return [...Array(char.length).keys()].map((at) => `\\u${hex(char.charCodeAt(at), 4)}`).join('');
}

/** `s` with every control, bidi, line-separator and invisible character written as `\n`, `\r`, `\x1b`, `\u200b`. */
export function visibleText(text: string): string {
  return text.replace(UNSAFE, escapeOne);
}

/**
 * JSON text (JSON.stringify's output) with the controls JSON leaves raw written as `\u` escapes:
 * the same value once parsed, and no raw control character in the file or on the terminal.
 * JSON.stringify already escapes C0; these characters can only occur inside strings.
 */
export function visibleJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, jsonEscape);
}

/**
 * A text whose newlines are its composer's own (a plan, a problem with its source line), each line
 * escaped: data inside it was escaped where it was put in, so a newline left here is a real line.
 */
export function visibleLines(text: string): string {
  return text.split('\n').map(visibleText).join('\n');
}

/** A copy of a JSON-like value with every string in it (keys too) escaped: data to be rendered as text. */
export function visibleValue<T>(value: T): T {
  return escapeValue(value) as T;
}

function escapeValue(value: unknown): unknown {
  if (typeof value === 'string') return visibleText(value);
  if (Array.isArray(value)) return value.map(escapeValue);
  if (value instanceof Date || value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [visibleText(key), escapeValue(item)]));
}
