import { ResponseError } from './response-error.js';
import type { Peer, TransportErrorData } from './transport-error.js';

/**
 * Reading an answer's text as both APIs need it: JSON or not, and the peer's words made fit for
 * one line of our own message. Text from the peer is data: our own secrets are cut out of it (a
 * peer may echo a body or a header) before it is folded onto one line and cut, since a secret
 * split by the cut or re-spaced by the folding would no longer be found by any later redactor.
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

/** The peer's sentence on one line, at most `max` characters; undefined when it said nothing. */
export function oneLine(text: string | undefined, redact: (text: string) => string, max: number): string | undefined {
  if (text === undefined) return undefined;
  const line = redact(text).replace(/\s+/g, ' ').trim();
  if (line === '') return undefined;
  return line.length > max ? `${line.slice(0, max)}...` : line;
}

const SNIPPET = 80;

/** `a body that is not JSON (text/html): "<html><body>Bad gateway</body></html>"`, or `an empty body instead of JSON`. */
function describeBody(raw: RawAnswer, redact: (text: string) => string): string {
  const start = oneLine(raw.text, redact, SNIPPET);
  if (start === undefined) return 'an empty body instead of JSON';
  const type = raw.contentType === undefined ? '' : ` (${raw.contentType})`;
  return `a body that is not JSON${type}: "${start}"`;
}
