import { isIP, isIPv4, isIPv6 } from 'node:net';
import type { Family } from './stanza.js';

/** Syntax checks of addresses as ifupdown takes them. */

export function isAddressOfFamily(value: string, family: Family): boolean {
  return family === 'inet' ? isIPv4(value) : isIPv6(value);
}

export function isIpAddress(value: string): boolean {
  return isIP(value) !== 0;
}

/** A dotted IPv4 netmask with contiguous one bits ("255.255.255.0"). */
function isDottedNetmask(value: string): boolean {
  if (!isIPv4(value)) return false;
  const bits = value
    .split('.')
    .map((octet) => Number(octet).toString(2).padStart(8, '0'))
    .join('');
  return /^1*0*$/.test(bits);
}

/** An IPv6 prefix length written as a string ("64"), as ifupdown's inet6 netmask. */
function isPrefixLength(value: string, max: number): boolean {
  return /^\d{1,3}$/.test(value) && Number(value) <= max;
}

export function isNetmaskOfFamily(value: string, family: Family): boolean {
  return family === 'inet' ? isDottedNetmask(value) : isPrefixLength(value, 128);
}

export function isCidrOfFamily(value: string, family: Family): boolean {
  const slash = value.indexOf('/');
  if (slash < 0) return false;
  const address = value.slice(0, slash);
  const prefix = value.slice(slash + 1);
  return isAddressOfFamily(address, family) && isPrefixLength(prefix, family === 'inet' ? 32 : 128);
}

export function isCidr(value: string): boolean {
  return isCidrOfFamily(value, 'inet') || isCidrOfFamily(value, 'inet6');
}

const LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

export function isDomainName(value: string): boolean {
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  return name.length > 0 && name.length <= 253 && name.split('.').every((label) => LABEL.test(label));
}

export function familyLabel(family: Family): string {
  return family === 'inet' ? 'IPv4' : 'IPv6';
}
