import { describe, expect, it } from 'vitest';
import { restartNetworking, useSimulatorApi } from './sim-client.js';

/** GET/PUT/DELETE /access_control/acl/: effective at once, no duplicates, remove one or all. */

const RULE = {
  action: 'permit',
  protocol: 'tcp',
  from_port: 443,
  to_port: 443,
  source_addresses: ['192.0.2.0/24'],
  interfaces: ['eth0'],
};
const OTHER = { ...RULE, protocol: 'udp', from_port: 161, to_port: 162 };

const { sim, api } = useSimulatorApi({ restartMs: 100, serviceRateLimit: false });

describe('access control list', () => {
  it('starts without non-default rules', async () => {
    expect((await api.get('/access_control/acl/')).body).toEqual({ success: true, rules: [] });
  });

  it('adds a rule at once, without a restart, and does not add an identical rule twice', async () => {
    expect((await api.put('/access_control/acl/', RULE)).body).toEqual({ success: true });
    expect((await api.put('/access_control/acl/', { ...RULE })).status).toBe(200);
    expect((await api.put('/access_control/acl/', OTHER)).status).toBe(200);
    expect((await api.get('/access_control/acl/')).body.rules).toEqual([RULE, OTHER]);
    expect(sim.state().restarts).toBe(0);
  });

  it('keeps its rules across a networking restart', async () => {
    await api.put('/access_control/acl/', RULE);
    await restartNetworking(sim, api);
    expect((await api.get('/access_control/acl/')).body.rules).toEqual([RULE]);
  });

  it('removes one rule with DELETE and a body; 404 when there is no such rule', async () => {
    await api.put('/access_control/acl/', RULE);
    await api.put('/access_control/acl/', OTHER);
    expect((await api.del('/access_control/acl/', RULE)).body).toEqual({ success: true });
    expect((await api.get('/access_control/acl/')).body.rules).toEqual([OTHER]);
    const again = await api.del('/access_control/acl/', RULE);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ success: false, error: 'No such rule in the access control list.' });
  });

  it('removes every non-default rule with DELETE without a body', async () => {
    await api.put('/access_control/acl/', RULE);
    await api.put('/access_control/acl/', OTHER);
    expect((await api.del('/access_control/acl/')).body).toEqual({ success: true });
    expect((await api.get('/access_control/acl/')).body.rules).toEqual([]);
  });

  it.each([
    ['an unknown field', { ...RULE, comment: 'x' }, 'Unknown field "comment".'],
    ['a deny rule', { ...RULE, action: 'deny' }, 'Field "action" must be "permit".'],
    ['another protocol', { ...RULE, protocol: 'icmp' }, 'Field "protocol" must be "tcp" or "udp".'],
    ['a port 0', { ...RULE, from_port: 0 }, 'Field "from_port" must be a port number from 1 to 65535.'],
    ['a port over 65535', { ...RULE, to_port: 70000 }, 'Field "to_port" must be a port number from 1 to 65535.'],
    [
      'from_port above to_port',
      { ...RULE, from_port: 444, to_port: 443 },
      'Field "to_port" must not be below "from_port".',
    ],
    ['no source address', { ...RULE, source_addresses: [] }, 'Field "source_addresses" must list at least one CIDR.'],
    [
      'a source that is not a CIDR',
      { ...RULE, source_addresses: ['192.0.2.1'] },
      'Field "source_addresses[0]" must be a CIDR such as "192.0.2.0/24".',
    ],
    ['no interface', { ...RULE, interfaces: [] }, 'Field "interfaces" must list at least one interface.'],
    [
      'an interface the device lacks',
      { ...RULE, interfaces: ['eth0', 'eth9'] },
      'Field "interfaces[1]" must name an interface of this device; "eth9" is not one.',
    ],
    ['a missing field', { ...RULE, interfaces: undefined }, 'Field "interfaces" is required.'],
    ['a body that is not an object', [RULE], 'Request body must be a JSON object.'],
  ])('refuses %s', async (_label, body, sentence) => {
    const answer = await api.put('/access_control/acl/', body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, error: sentence });
    expect((await api.get('/access_control/acl/')).body.rules).toEqual([]);
  });

  it('checks the rule given to DELETE the same way', async () => {
    const answer = await api.del('/access_control/acl/', { ...RULE, protocol: 'icmp' });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('Field "protocol" must be "tcp" or "udp".');
  });
});
