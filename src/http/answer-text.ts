import { ResponseError } from './response-error.js';
import type { Peer, TransportErrorData } from './transport-error.js';

/**
 * Reading an answer's text as both APIs need it: JSON or not, and the peer's words made fit for
 * one line of our own message. Text from the peer is data: our own secrets are cut out of it (a
 * peer may echo a body or a header) before it is folded onto one line and cut, since a secret
 * split by the cut or re-spaced by the folding would no longer be found by any later redactor;
 * long encoded runs are hidden whatever they hold, since an echo encoded as a whole hides a secret
 * from any redactor.
 */

export interface RawAnswer {
  status: number;
  contentType: string | undefined;
  text: string;
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
 * undefined when it said nothing. Known secrets go first (redact), then every long encoded run
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

/**
 * Every run of more than 40 characters that could be encoded data becomes
 * `[encoded data, N characters, not shown]`. A peer may echo our request back encoded as a whole
 * (base64 of the JSON body, its hex, its URL-encoding): the secret inside is then at no fixed
 * offset or alignment, and no redactor that knows the secret's own encodings finds it. Decoding
 * the run to look for secrets was the other choice, and was left out: it means guessing the
 * encoding, the alignment and any nesting, and a guess missed leaks; hiding the run leaks nothing
 * whatever it holds, the device's own secrets included. A person reading a device's sentence loses
 * nothing they could read: such runs are not words. A run with no letter or digit (a row of dots
 * or dashes) is left as it is.
 */
function encodedRunsHidden(text: string): string {
  return text.replace(ENCODED_RUN, (run) =>
    /[A-Za-z0-9]/.test(run) ? `[encoded data, ${run.length} characters, not shown]` : run,
  );
}

const SNIPPET = 80;

/** `a body that is not JSON (text/html): "<html><body>Bad gateway</body></html>"`, or `an empty body instead of JSON`. */
function describeBody(raw: RawAnswer, redact: (text: string) => string): string {
  const start = oneLine(raw.text, redact, SNIPPET);
  if (start === undefined) return 'an empty body instead of JSON';
  const type = raw.contentType === undefined ? '' : ` (${raw.contentType})`;
  return `a body that is not JSON${type}: "${start}"`;
}
