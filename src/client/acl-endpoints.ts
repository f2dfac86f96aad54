import { z } from 'zod';
import { AclRule, describeAclRule } from '../admin-api/acl-rule.js';
import { request, type DeviceConnection } from './device-request.js';
import { parseWire } from '../admin-api/wire-shape.js';

/** Access control list endpoints: changes take effect at once, without a restart. */

const AclList = z.looseObject({ rules: z.array(AclRule) });
const ACL_PATH = '/access_control/acl/';

export async function listAcl(connection: DeviceConnection): Promise<AclRule[]> {
  const answer = await request(connection, { method: 'GET', path: ACL_PATH });
  return answer.read((json) => parseWire(AclList, json).rules);
}

/** The device does not add an identical rule twice. */
export async function addAcl(connection: DeviceConnection, rule: AclRule): Promise<void> {
  await request(connection, { method: 'PUT', path: ACL_PATH, subject: describeAclRule(rule), body: { json: rule } });
}

/**
 * Removes one rule (404 if absent). A DELETE without a body would remove every non-default rule:
 * the rule is always sent, so that cannot happen by accident here.
 */
export async function deleteAcl(connection: DeviceConnection, rule: AclRule): Promise<void> {
  await request(connection, { method: 'DELETE', path: ACL_PATH, subject: describeAclRule(rule), body: { json: rule } });
}
