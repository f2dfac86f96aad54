import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseAuthenticatorProfile, startSimulator, type SimulatorHandle } from '../../src/simulator/index.js';
import { apiClient, restartNetworking, type ApiClient, interfaceOf } from './sim-client.js';

/**
 * The rules of docs/device-model.md, each driven with raw HTTP (undici's
 * request() in sim-client.ts, never the product's client): addresses refused with every method
 * but static, a VLAN only on a wired physical interface, the VLAN 802.1X rule both ways, and the
 * copy of interface-level fields into the other family's pending stanza.
 */

type Body = Record<string, unknown>;
const without = (body: Body, ...fields: string[]): Body =>
  Object.fromEntries(Object.entries(body).filter(([k]) => !fields.includes(k)));

const PEAP_FIELDS = {
  wpa_key_mgmt: 'IEEE8021X',
  wpa_eap: 'PEAP',
  wpa_identity: 'alice',
  wpa_password: 'alicepass',
  wpa_phase1: 'peapver=0',
  wpa_phase2: 'auth=MSCHAPV2',
} as const;
const MD5_FIELDS = {
  wpa_key_mgmt: 'IEEE8021X',
  wpa_eap: 'MD5',
  wpa_identity: 'md5user',
  wpa_password: 'md5secret',
} as const;
const ETH1: Body = { name: 'eth1', family: 'inet', method: 'dhcp' };
const ETH1_PEAP: Body = { ...ETH1, ...PEAP_FIELDS };
const ETH1_STATIC6: Body = { name: 'eth1', family: 'inet6', method: 'static', address: '2001:db8::10', netmask: '64' };
const VLAN: Body = { name: 'eth1.100', family: 'inet', method: 'dhcp', vlan_raw_device: 'eth1' };
const VLAN_MD5: Body = { ...VLAN, ...MD5_FIELDS };

const vlanLeftWithout = (request: 'POST' | 'DELETE', vlans = ['eth1.100']) => {
  const named = vlans.map((v) => `"${v}"`).join(', ');
  const subject = vlans.length === 1 ? `VLAN ${named} has` : `VLANs ${named} have`;
  return `${subject} 802.1X in the pending configuration, and a VLAN may use 802.1X only if its vlan_raw_device "eth1" is configured dhcp or static with 802.1X; this ${request} would leave "eth1" without it: turn off the 802.1X of ${named}, or delete ${vlans.length === 1 ? 'it' : 'them'}, first.`;
};

let sim: SimulatorHandle;
let api: ApiClient;

beforeAll(async () => {
  sim = await startSimulator({ restartMs: 50, serviceRateLimit: false });
  api = apiClient(sim);
});

afterAll(async () => {
  await api.close();
  await sim.close();
});

beforeEach(async () => {
  await sim.reset();
});

async function accepted(body: Body): Promise<void> {
  const answer = await api.post('/interface/', body);
  expect(answer.body).toEqual({ success: true });
  expect(answer.status).toBe(200);
}

async function refused(body: Body, error: string): Promise<void> {
  const answer = await api.post('/interface/', body);
  expect(answer.body).toEqual({ success: false, error });
  expect(answer.status).toBe(400);
}

async function pending(name: string): Promise<Record<string, unknown>> {
  const answer = await api.get(`/interface/${name}/?config_state=pending`);
  expect(answer.status).toBe(200);
  return interfaceOf(answer).families;
}

describe('address, netmask and gateway belong to method static only', () => {
  it.each([
    ['address with manual', { ...ETH1, method: 'manual', address: '192.0.2.10' }, 'address', 'manual'],
    ['netmask with manual', { ...ETH1, method: 'manual', netmask: '255.255.255.0' }, 'netmask', 'manual'],
    ['gateway with manual', { ...ETH1, method: 'manual', gateway: '192.0.2.1' }, 'gateway', 'manual'],
    [
      'a whole static address with manual',
      { ...ETH1, method: 'manual', address: '192.0.2.10', netmask: '255.255.255.0', gateway: '192.0.2.1' },
      'address',
      'manual',
    ],
    ['netmask with inet6 auto', { ...ETH1, family: 'inet6', method: 'auto', netmask: '64' }, 'netmask', 'auto'],
    ['netmask with inet6 dhcp', { ...ETH1, family: 'inet6', method: 'dhcp', netmask: '64' }, 'netmask', 'dhcp'],
  ])('refuses %s, naming the field', async (_label, body, field, method) => {
    await refused(body, `Field "${field}" is not allowed with method "${method}".`);
    expect((await api.get('/interface/eth1/?config_state=pending')).status).toBe(404);
  });

  it('accepts manual without any address', async () => {
    await accepted({ ...ETH1, method: 'manual', mtu: 9000 });
  });
});

describe("a VLAN's vlan_raw_device is a wired physical interface", () => {
  it('refuses a VLAN on wlan0', async () => {
    await refused(
      { name: 'wlan0.100', family: 'inet', method: 'dhcp', vlan_raw_device: 'wlan0' },
      'Field "vlan_raw_device" must be a wired physical interface (ethN); VLAN "wlan0.100" would sit on "wlan0", which is wireless.',
    );
  });

  it('refuses a VLAN on bridge1, even while bridge1 is configured', async () => {
    await accepted({ name: 'bridge1', family: 'inet', method: 'dhcp' });
    await refused(
      { name: 'bridge1.100', family: 'inet', method: 'dhcp', vlan_raw_device: 'bridge1' },
      'Field "vlan_raw_device" must be a wired physical interface (ethN); VLAN "bridge1.100" would sit on "bridge1", which is a bridge.',
    );
  });

  it('refuses a VLAN of eth1 that names bridge1 or wlan0 as its parent', async () => {
    for (const parent of ['bridge1', 'wlan0']) {
      await refused(
        { ...VLAN, vlan_raw_device: parent },
        'Field "vlan_raw_device" must be "eth1", the parent of "eth1.100".',
      );
    }
  });

  it('accepts VLANs on eth0 and eth1', async () => {
    await accepted(VLAN);
    await accepted({ ...VLAN, name: 'eth0.200', vlan_raw_device: 'eth0' });
  });

  it('lets an access control rule name a VLAN of eth1, not one of wlan0, which cannot exist', async () => {
    const rule = {
      action: 'permit',
      protocol: 'tcp',
      from_port: 22,
      to_port: 22,
      source_addresses: ['192.0.2.0/24'],
      interfaces: ['eth1.100'],
    };
    expect((await api.put('/access_control/acl/', rule)).body).toEqual({ success: true });
    const answer = await api.put('/access_control/acl/', { ...rule, interfaces: ['wlan0.100'] });
    expect(answer.body).toEqual({
      success: false,
      error: 'Field "interfaces[0]" must name an interface of this device; "wlan0.100" is not one.',
    });
    expect(answer.status).toBe(400);
  });
});

describe('the VLAN 802.1X rule holds both ways, judged on the pending view', () => {
  it('refuses a POST of the parent without 802.1X while a pending VLAN has 802.1X, naming the VLAN; nothing changes', async () => {
    await accepted(ETH1_PEAP);
    await accepted(VLAN_MD5);
    const before = sim.state().interfaces.pending;
    await refused(ETH1, vlanLeftWithout('POST'));
    expect(sim.state().interfaces.pending).toEqual(before);
  });

  it('refuses the same POST and a DELETE of the parent while the VLAN with 802.1X is active', async () => {
    await accepted(ETH1_PEAP);
    await accepted(VLAN_MD5);
    await restartNetworking(sim, api);
    await refused(ETH1, vlanLeftWithout('POST'));
    const deleted = await api.del('/interface/eth1/?family=inet');
    expect(deleted.body).toEqual({ success: false, error: vlanLeftWithout('DELETE') });
    expect(deleted.status).toBe(400);
    expect(await pending('eth1')).toMatchObject({ inet: { method: 'dhcp', wpa_eap: 'PEAP' } });
  });

  it('refuses a DELETE of a parent stanza that was only pending', async () => {
    await accepted(ETH1_PEAP);
    await accepted(VLAN_MD5);
    const deleted = await api.del('/interface/eth1/?family=inet');
    expect(deleted.body).toEqual({ success: false, error: vlanLeftWithout('DELETE') });
    expect(await pending('eth1')).toMatchObject({ inet: { wpa_eap: 'PEAP' } });
  });

  it('refuses a parent turned manual: 802.1X alone is not enough', async () => {
    await accepted(ETH1_PEAP);
    await accepted(VLAN_MD5);
    await refused({ ...ETH1_PEAP, method: 'manual' }, vlanLeftWithout('POST'));
  });

  it('names every VLAN that would be left without', async () => {
    await accepted(ETH1_PEAP);
    await accepted(VLAN_MD5);
    await accepted({ ...VLAN_MD5, name: 'eth1.200' });
    await refused(ETH1, vlanLeftWithout('POST', ['eth1.100', 'eth1.200']));
  });

  it("judges the parent's two stanzas: a DELETE is refused when the other family is auto, accepted when it is static with 802.1X", async () => {
    await accepted(ETH1_PEAP);
    await accepted({ ...ETH1_PEAP, family: 'inet6', method: 'auto' });
    await accepted(VLAN_MD5);
    await restartNetworking(sim, api);
    expect((await api.del('/interface/eth1/?family=inet')).body).toEqual({
      success: false,
      error: vlanLeftWithout('DELETE'),
    });
    await accepted({ ...ETH1_STATIC6, ...PEAP_FIELDS });
    expect((await api.del('/interface/eth1/?family=inet')).body).toEqual({ success: true });
  });

  it("accepts the parent's change once the VLAN's 802.1X is off, or the VLAN deleted, first", async () => {
    await accepted(ETH1_PEAP);
    await accepted(VLAN_MD5);
    await restartNetworking(sim, api);
    await accepted(VLAN);
    await accepted(ETH1);
    await restartNetworking(sim, api);

    await accepted(ETH1_PEAP);
    await accepted(VLAN_MD5);
    await restartNetworking(sim, api);
    expect((await api.del('/interface/eth1.100/?family=inet')).status).toBe(200);
    expect((await api.del('/interface/eth1/?family=inet')).body).toEqual({ success: true });
  });

  it('leaves the parent alone when its VLANs have no 802.1X', async () => {
    await accepted(ETH1_PEAP);
    await accepted(VLAN);
    await accepted(ETH1);
    expect((await api.del('/interface/eth1/?family=inet')).status).toBe(200);
  });
});

describe('interface-level fields: the device copies them into the other pending stanza', () => {
  it("keeps the other stanza's own fields and takes the posted interface-level fields", async () => {
    await accepted({ ...ETH1_STATIC6, mtu: 1500, link_speed: 100, link_duplex: 'full', link_autoneg: false });
    await accepted({ ...ETH1, mtu: 9000 });
    expect(await pending('eth1')).toEqual({
      inet: { method: 'dhcp', mtu: 9000 },
      // link_* left out of the posted stanza: removed here too.
      inet6: { method: 'static', address: '2001:db8::10', netmask: '64', mtu: 9000 },
    });
  });

  it('turns 802.1X off on a dual-stack interface with one POST per family, never refused in between', async () => {
    await accepted(ETH1_PEAP);
    await accepted({ ...ETH1_PEAP, family: 'inet6', method: 'auto' });
    await restartNetworking(sim, api);
    await accepted(ETH1);
    expect(await pending('eth1')).toEqual({ inet: { method: 'dhcp' }, inet6: { method: 'auto' } });
    await accepted({ ...ETH1, family: 'inet6', method: 'auto' });
    await restartNetworking(sim, api);
    const active = interfaceOf(await api.get('/interface/eth1/?config_state=active')).families;
    expect(without(active.inet ?? {}, 'in_use')).toEqual({ method: 'dhcp' });
    expect(without(active.inet6 ?? {}, 'in_use')).toEqual({ method: 'auto' });
  });

  it('creates no stanza and revives none marked for removal', async () => {
    await accepted({ ...ETH1, mtu: 1400 });
    expect(Object.keys(await pending('eth1'))).toEqual(['inet']);
    await accepted(ETH1_STATIC6);
    await restartNetworking(sim, api);
    expect((await api.del('/interface/eth1/?family=inet6')).status).toBe(200);
    await accepted({ ...ETH1, mtu: 9000 });
    expect(await pending('eth1')).toEqual({ inet: { method: 'dhcp', mtu: 9000 }, inet6: null });
  });

  it('makes an unchanged active stanza pending only when the copy changes it', async () => {
    await accepted({ ...ETH1, mtu: 1400 });
    await accepted({ ...ETH1_STATIC6, mtu: 1400 });
    await restartNetworking(sim, api);
    sim.setFaults(['drop-field=address']);
    // inet is posted again with the same interface-level fields: inet6 is not touched, so the
    // drop-field fault (applied to stanzas a restart makes active) leaves its address alone.
    await accepted({ ...ETH1, method: 'manual', mtu: 1400 });
    await restartNetworking(sim, api);
    const active = interfaceOf(await api.get('/interface/eth1/?config_state=active')).families;
    expect(active.inet6?.address).toBe('2001:db8::10');
  });
});

describe('a copied write-only field works, not only its marker', () => {
  const PROFILE = 'eap_methods: [md5]\nusers:\n  - { identity: md5user, password: md5secret, methods: [md5] }\n';
  let port: SimulatorHandle;
  let client: ApiClient;

  beforeAll(async () => {
    const profile = await parseAuthenticatorProfile(PROFILE, 'md5-port.yaml');
    port = await startSimulator({ restartMs: 50, serviceRateLimit: false, switchPorts: { eth1: profile } });
    client = apiClient(port);
  });

  afterAll(async () => {
    await client.close();
    await port.close();
  });

  it('authorizes eth1 with the password copied into its inet6 stanza, after the inet stanza is gone', async () => {
    expect((await client.post('/interface/', { ...ETH1, family: 'inet6', method: 'auto' })).status).toBe(200);
    expect((await client.post('/interface/', { ...ETH1, ...MD5_FIELDS })).status).toBe(200);
    const families = interfaceOf(await client.get('/interface/eth1/?config_state=pending')).families;
    expect(families.inet6).toEqual({
      method: 'auto',
      wpa_key_mgmt: 'IEEE8021X',
      wpa_eap: 'MD5',
      wpa_identity: 'md5user',
      wpa_password_set: true,
    });
    // Only the copy is left: the inet stanza was never active, so DELETE drops it.
    expect((await client.del('/interface/eth1/?family=inet')).status).toBe(200);
    await restartNetworking(port, client);
    expect(port.state().dot1x['eth1']).toMatchObject({ state: 'authorized', reason: 'authorized by md5 as "md5user"' });
    const active = interfaceOf(await client.get('/interface/eth1/?config_state=active')).families;
    expect(active.inet6?.in_use).toEqual({ address: '2001:db8:100::11', netmask: '64', gateway: '2001:db8:100::1' });
  });
});
