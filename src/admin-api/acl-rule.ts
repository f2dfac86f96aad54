import { z } from 'zod';

/**
 * One access-control rule (docs/device-model.md, "Services and appliance"). Values are typed by
 * their JSON type, not narrowed to `permit`/`tcp`/`udp`, so a device with more actions still lists.
 */
export const AclRule = z.looseObject({
  action: z.string(),
  protocol: z.string(),
  from_port: z.number(),
  to_port: z.number(),
  source_addresses: z.array(z.string()),
  interfaces: z.array(z.string()),
});
export type AclRule = z.infer<typeof AclRule>;

/** `tcp 443 from 10.0.0.0/8 on eth0`, to name a rule in an error message. */
export function describeAclRule(rule: AclRule): string {
  const ports = rule.from_port === rule.to_port ? `${rule.from_port}` : `${rule.from_port}-${rule.to_port}`;
  return `${rule.protocol} ${ports} from ${rule.source_addresses.join(', ')} on ${rule.interfaces.join(', ')}`;
}
