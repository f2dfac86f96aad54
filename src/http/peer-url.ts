import { ErrorCode, MpprovError } from '../core/errors.js';
import type { Peer } from './transport-error.js';

/**
 * A peer's URL as configured: a URL, https, and without credentials (they would end up in
 * messages and logs; they travel in a header instead). What may follow the origin is the endpoint
 * layer's to check: a device takes none, the service a base path. Throws a ConfigInvalid
 * MpprovError naming the peer; `expected` is the form that sentence offers.
 */
export function peerUrl(text: string, peer: Peer, expected: string): URL {
  const what = `the ${peer} URL`;
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new MpprovError(
      ErrorCode.ConfigInvalid,
      `${what} "${withoutUserinfo(text)}" is not a URL; expected ${expected}`,
    );
  }
  if (parsed.username !== '' || parsed.password !== '')
    throw new MpprovError(ErrorCode.ConfigInvalid, `${what} must not contain a user name or password`);
  if (parsed.protocol !== 'https:')
    throw new MpprovError(ErrorCode.ConfigInvalid, `${what} "${text}" must start with https://`);
  return parsed;
}

/** Text that failed to parse (a bad port is enough) may still carry `user:password@`. */
function withoutUserinfo(text: string): string {
  return text.replace(/^([^/]*\/\/)[^/]*@/, '$1…@');
}
