/**
 * Text from outside (a stick, its label, a device, the service) is data: printed raw, a newline in
 * a name forges a log line, ESC and OSC sequences rewrite a terminal, a bidi control reorders what
 * a technician reads. Every such character is shown as a visible escape instead.
 *
 * Escaped: C0 controls except tab, DEL, C1 controls, the bidi controls (U+061C, U+200E, U+200F,
 * U+202A-U+202E, U+2066-U+2069) and the line and paragraph separators U+2028, U+2029. Tab stays:
 * it breaks no line and moves no cursor beyond its own line. A backslash from the data is kept as
 * it is, so escaping twice changes nothing (the function is idempotent) and a text can pass the
 * composer and then the sink without `\\x1b` growing.
 */

// eslint-disable-next-line no-control-regex -- matching control characters is this module's purpose
const UNSAFE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Characters JSON.stringify leaves raw although they are controls: DEL, C1, bidi, U+2028/U+2029. */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r' };

const hex = (char: string, width: number): string => char.charCodeAt(0).toString(16).padStart(width, '0');

function escapeOne(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${hex(char, 2)}` : `\\u${hex(char, 4)}`;
}

/** `s` with every control, bidi and line-separator character written as `\n`, `\r`, `\x1b`, `\u202e`. */
export function visibleText(text: string): string {
  return text.replace(UNSAFE, escapeOne);
}

/**
 * JSON text (JSON.stringify's output) with the controls JSON leaves raw written as `\u` escapes:
 * the same value once parsed, and no raw control character in the file or on the terminal.
 * JSON.stringify already escapes C0; these characters can only occur inside strings.
 */
export function visibleJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (char) => `\\u${hex(char, 4)}`);
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
