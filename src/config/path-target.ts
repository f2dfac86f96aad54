import { hostAddress } from '../core/host-address.js';
import { ipFamily, isDomainName } from './ip-address.js';

/**
 * A network path's `target` (stick-format.md, "Network paths"): a host name by RFC 1123 (labels of
 * letters, digits and hyphens, at most 253 characters) or an IPv4/IPv6 address. RFC 1123 2.1 says
 * a host name never has the dotted-decimal form: `192.0.2.300` is a mistyped address, not a name.
 */
export function isPathTarget(text: string): boolean {
  if (ipFamily(text) !== undefined) return true;
  if (!isDomainName(text) || text.endsWith('.')) return false;
  const labels = text.split('.');
  return !/^\d+$/.test(labels[labels.length - 1] ?? '');
}

/**
 * The one text two targets are compared by: host names in lower case (DNS ignores case), addresses
 * in their canonical spelling, so `2001:DB8::1` and `2001:db8:0::1` are the same target.
 */
export function pathTargetKey(text: string): string {
  return ipFamily(text) === undefined ? text.toLowerCase() : hostAddress(text);
}

/** A location is text for people: one line, no control characters. */
export function isLocationText(text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return !/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(text);
}
