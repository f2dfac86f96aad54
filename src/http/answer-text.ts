import { ResponseError } from './response-error.js';
import type { Peer, TransportErrorData } from './transport-error.js';

/**
 * Reading an answer's text as both APIs need it: JSON or not, and the peer's words made fit for
 * one line of our own message. Text from the peer is data: our own secrets are cut out of it (a
 * peer may echo a body or a header) before it is folded onto one line and cut, since a secret
 * split by the cut or re-spaced by the folding would no longer be found by any later redactor;
 * long encoded runs are hidden whatever they hold, since an echo encoded as a whole hides a secret
 * from any redactor, and so do shorter runs a secret alone fits in.
 */

export interface RawAnswer {
  status: number;
  contentType: string | undefined;
  text: string;
  /** The HTTP Date header as sent: the peer's clock. */
  date?: string | undefined;
}

const NOT_JSON = Symbol('not JSON');

/** The body's JSON, or a symbol no schema accepts. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

/** A 2xx answer's JSON: a body that is not JSON is the peer's ResponseError, saying what came instead. */
export function successJson(
  raw: RawAnswer,
  peer: Peer,
  data: TransportErrorData,
  redact: (text: string) => string,
): unknown {
  const json = parseJson(raw.text);
  if (json !== NOT_JSON) return json;
  throw new ResponseError(peer, {
    ...data,
    status: raw.status,
    problem: 'not-json',
    detail: describeBody(raw, redact),
  });
}

/**
 * The peer's sentence on one line, at most `max` characters (a longer one is cut, and says so);
 * undefined when it said nothing. Known secrets go first (redact), then every encoded run
 * (encodedRunsHidden), then the folding and the cut.
 */
export function oneLine(text: string | undefined, redact: (text: string) => string, max: number): string | undefined {
  if (text === undefined) return undefined;
  const line = encodedRunsHidden(redact(text)).replace(/\s+/g, ' ').trim();
  if (line === '') return undefined;
  return line.length > max ? `${line.slice(0, max).trimEnd()}... (cut at ${max} of ${line.length} characters)` : line;
}

/** A run of base64, base64url, hex or percent-encoding (with the characters a URL leaves as they are). */
const ENCODED_RUN = /[A-Za-z0-9+/=_%.~-]{41,}/g;

/** Percent-escapes, four or more, touching or with one separator between them: `%44 %6f %74 %31`. */
const PERCENT_RUN = /%[0-9A-Fa-f]{2}(?:[\s:.,-]?%[0-9A-Fa-f]{2}){3,}/g;

/**
 * Hex bytes joined by `:`, space, `-` or `.`: `44:6f:74:31:78:53:65`. Seven bytes or more: a MAC
 * address (six) is something a device names in an ordinary sentence and stays readable.
 */
const HEX_BYTES = /(?<![0-9A-Fa-f])[0-9A-Fa-f]{2}(?:[\s:.-][0-9A-Fa-f]{2}){6,}(?![0-9A-Fa-f])/g;

/**
 * A run of base64 or base64url characters (padding included), as long as it goes. An `=` before it
 * is a boundary, not part of it: `key=<base64>` is how a device quotes a field.
 */
const BASE64_RUN = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/_-])/g;

/** A piece of a path or a name: a word (`interface`, `Capability`, `HTTP`) with a number after it (`v1`, `eth0`). */
const WORD = /^(?:[A-Z]?[a-z]*|[A-Z]*)\d*$/;

/**
 * Every run that could be encoded data becomes `[encoded data, N characters, not shown]`:
 * - any run of more than 40 such characters;
 * - shorter runs down to what a secret of a dozen characters becomes: 16+ characters of base64
 *   or base64url holding a digit or one of `+/=_-` (a plain long word holds none and stays), 16+
 *   hex digits, 7+ hex bytes with separators, 4+ percent-escapes. Base64 of a secret shifted by a
 *   byte or two shares no character with the secret's own base64, so only hiding it works.
 * A path or a name made of words (`/api/v1/appliance/capability`, `wpa_password`) stays: base64
 * is not made of words.
 *
 * A peer may echo our request back encoded as a whole (base64 of the JSON body, its hex, its
 * URL-encoding): the secret inside is then at no fixed offset or alignment, and no redactor that
 * knows the secret's own encodings finds it. Decoding the run to look for secrets was the other
 * choice, and was left out: it means guessing the encoding, the alignment and any nesting, and a
 * guess missed leaks; hiding the run leaks nothing whatever it holds, the device's own secrets
 * included. A person reading a device's sentence loses nothing they could read: such runs are not
 * words. A run with no letter or digit (a row of dots or dashes) is left as it is.
 */
function encodedRunsHidden(text: string): string {
  const hidden = (run: string): string => `[encoded data, ${run.length} characters, not shown]`;
  return text
    .replace(ENCODED_RUN, (run) => (/[A-Za-z0-9]/.test(run) ? hidden(run) : run))
    .replace(PERCENT_RUN, hidden)
    .replace(HEX_BYTES, hidden)
    .replace(BASE64_RUN, (run) => (looksEncoded(run) ? hidden(run) : run));
}

function looksEncoded(run: string): boolean {
  if (/^[0-9A-Fa-f]+$/.test(run)) return true;
  if (!/[0-9+/=_-]/.test(run)) return false;
  return /[+=]/.test(run) || !run.split(/[/_-]/).every((piece) => WORD.test(piece));
}

const SNIPPET = 80;

/** `a body that is not JSON (text/html): "<html><body>Bad gateway</body></html>"`, or `an empty body instead of JSON`. */
function describeBody(raw: RawAnswer, redact: (text: string) => string): string {
  const start = oneLine(raw.text, redact, SNIPPET);
  if (start === undefined) return 'an empty body instead of JSON';
  const type = raw.contentType === undefined ? '' : ` (${raw.contentType})`;
  return `a body that is not JSON${type}: "${start}"`;
}
