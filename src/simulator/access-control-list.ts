import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { isCidr } from './address-syntax.js';
import { isConfigurableInterface, type DeviceModel } from './device-model.js';
import { integer, list, nonEmpty, oneOf, parseWith, type ParseResult } from './field-sentences.js';

/**
 * The access control list of docs/device-model.md: permit rules that take effect at once, without
 * a restart. The simulator keeps the rules but does not filter its own traffic with them: what
 * a real device denies outside its rules is not documented, and guessing would lock tests out.
 */

export const AclRule = z.strictObject({
  action: oneOf(['permit']),
  protocol: oneOf(['tcp', 'udp']),
  from_port: integer(1, 65535, 'a port number from 1 to 65535'),
  to_port: integer(1, 65535, 'a port number from 1 to 65535'),
  source_addresses: list(nonEmpty('a CIDR string'), 'a list of CIDR strings'),
  interfaces: list(nonEmpty('an interface name'), 'a list of interface names'),
});
export type AclRule = z.infer<typeof AclRule>;

export function parseAclRule(body: unknown, model: DeviceModel): ParseResult<AclRule> {
  const parsed = parseWith(AclRule, body);
  if (!parsed.ok) return parsed;
  const rule = parsed.value;
  const error = checkAclRule(rule, model);
  return error === undefined ? parsed : { ok: false, error };
}

function checkAclRule(rule: AclRule, model: DeviceModel): string | undefined {
  if (rule.from_port > rule.to_port) return 'Field "to_port" must not be below "from_port".';
  if (rule.source_addresses.length === 0) return 'Field "source_addresses" must list at least one CIDR.';
  const badSource = rule.source_addresses.findIndex((a) => !isCidr(a));
  if (badSource >= 0) return `Field "source_addresses[${badSource}]" must be a CIDR such as "192.0.2.0/24".`;
  if (rule.interfaces.length === 0) return 'Field "interfaces" must list at least one interface.';
  const badInterface = rule.interfaces.findIndex((name) => !isConfigurableInterface(model, name));
  if (badInterface >= 0) {
    return `Field "interfaces[${badInterface}]" must name an interface of this device; "${rule.interfaces[badInterface]}" is not one.`;
  }
  return undefined;
}

/** The device's non-default rules; the default rules (HTTPS from anywhere) are not listed. */
export class AccessControlList {
  private rules: AclRule[] = [];

  list(): AclRule[] {
    return this.rules.map((rule) => structuredClone(rule));
  }

  /** Adds a rule unless an identical one is there; returns whether it was added. */
  add(rule: AclRule): boolean {
    if (this.rules.some((r) => isDeepStrictEqual(r, rule))) return false;
    this.rules.push(structuredClone(rule));
    return true;
  }

  /** Removes an identical rule; returns whether there was one. */
  remove(rule: AclRule): boolean {
    const index = this.rules.findIndex((r) => isDeepStrictEqual(r, rule));
    if (index < 0) return false;
    this.rules.splice(index, 1);
    return true;
  }

  clear(): number {
    const count = this.rules.length;
    this.rules = [];
    return count;
  }
}
