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

export const NOT_JSON = Symbol('not JSON');

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
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
export function describeBody(raw: RawAnswer, redact: (text: string) => string): string {
  const start = oneLine(raw.text, redact, SNIPPET);
  if (start === undefined) return 'an empty body instead of JSON';
  const type = raw.contentType === undefined ? '' : ` (${raw.contentType})`;
  return `a body that is not JSON${type}: "${start}"`;
}
