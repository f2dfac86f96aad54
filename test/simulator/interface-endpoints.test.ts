import { beforeEach, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { apiClient, restartNetworking, STANZA, useSimulatorApi, interfaceOf, interfacesOf } from './sim-client.js';

/** GET/POST/PUT/DELETE /interface/: pending versus active, the families shape, redaction, in_use. */

const { sim, api } = useSimulatorApi({ restartMs: 100, serviceRateLimit: false });

describe('GET /interface/', () => {
  it('shows the default start: eth0 inet dhcp, holding the listening address as the management interface', async () => {
    const answer = await api.get('/interface/?config_state=active');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.body).toEqual({
      success: true,
      interfaces: [
        {
          name: 'eth0',
          config_state: 'active',
          families: { inet: { method: 'dhcp', in_use: { address: '127.0.0.1', netmask: '255.0.0.0' } } },
        },
      ],
    });
  });

  it('refuses a request without config_state: there is no default view', async () => {
    const answer = await api.get('/interface/');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      success: false,
      error: 'Query parameter "config_state" is required: "active" or "pending".',
    });
  });

  it('refuses an unknown config_state', async () => {
    const answer = await api.get('/interface/?config_state=running');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      success: false,
      error: 'Query parameter "config_state" must be "active" or "pending".',
    });
  });
});

describe('POST /interface/ stores a pending stanza', () => {
  it('leaves the active view unchanged and shows the whole next configuration as pending', async () => {
    expect((await api.post('/interface/', STANZA.eth1Static)).status).toBe(200);
    const active = await api.get('/interface/?config_state=active');
    expect(interfacesOf(active).map((i) => i.name)).toEqual(['eth0']);
    const pending = await api.get('/interface/?config_state=pending');
    expect(pending.body.interfaces).toEqual([
      { name: 'eth0', config_state: 'pending', families: { inet: { method: 'dhcp' } } },
      {
        name: 'eth1',
        config_state: 'pending',
        families: { inet: { method: 'static', address: '192.0.2.10', netmask: '255.255.255.0', gateway: '192.0.2.1' } },
      },
    ]);
  });

  it('replaces a stanza posted again', async () => {
    await api.post('/interface/', STANZA.eth1Static);
    await api.post('/interface/', STANZA.eth1Dhcp);
    const pending = await api.get('/interface/eth1/?config_state=pending');
    expect(interfaceOf(pending).families).toEqual({ inet: { method: 'dhcp' } });
  });

  it('becomes active at the next networking restart', async () => {
    await api.post('/interface/', STANZA.eth1Static);
    await restartNetworking(sim, api);
    const active = await api.get('/interface/eth1/?config_state=active');
    expect(active.body.interface).toEqual({
      name: 'eth1',
      config_state: 'active',
      families: {
        inet: {
          method: 'static',
          address: '192.0.2.10',
          netmask: '255.255.255.0',
          gateway: '192.0.2.1',
          in_use: { address: '192.0.2.10', netmask: '255.255.255.0', gateway: '192.0.2.1' },
        },
      },
    });
  });
});

describe('GET /interface/{name}/', () => {
  it('answers 404 for an interface with no stanza in that state', async () => {
    await api.post('/interface/', STANZA.eth1Static);
    const active = await api.get('/interface/eth1/?config_state=active');
    expect(active.status).toBe(404);
    expect(active.body).toEqual({ success: false, error: 'Interface "eth1" has no active configuration.' });
    expect((await api.get('/interface/eth1/?config_state=pending')).status).toBe(200);
  });

  it('answers 404 for an interface the device does not have', async () => {
    const answer = await api.get('/interface/eth9/?config_state=active');
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ success: false, error: 'No interface "eth9" on this device.' });
  });
});

describe('write-only fields', () => {
  it('are never returned; <field>_set: true stands in their place', async () => {
    await api.post('/interface/', STANZA.wlanPersonal);
    await api.post('/interface/', {
      name: 'eth1',
      family: 'inet',
      method: 'dhcp',
      wpa_key_mgmt: 'IEEE8021X',
      wpa_eap: 'MD5',
      wpa_identity: 'md5user',
      wpa_password: 'md5-secret-value',
    });
    const raw = await api.get('/interface/?config_state=pending');
    const text = JSON.stringify(raw.body);
    expect(text).not.toContain('correct horse');
    expect(text).not.toContain('md5-secret-value');
    const [, eth1, wlan0] = interfacesOf(raw);
    expect(eth1?.families.inet).toEqual({
      method: 'dhcp',
      wpa_key_mgmt: 'IEEE8021X',
      wpa_eap: 'MD5',
      wpa_identity: 'md5user',
      wpa_password_set: true,
    });
    expect(wlan0?.families.inet).toEqual({
      method: 'dhcp',
      ssid: 'lab',
      security: 'wpa2_personal',
      passphrase_set: true,
    });
    const state = JSON.stringify(sim.state());
    expect(state).not.toContain('correct horse');
    expect(state).not.toContain('md5-secret-value');
  });
});

describe('in_use in the active view', () => {
  it('holds a DHCP lease, a SLAAC address, a static address, and nothing for manual', async () => {
    await api.post('/interface/', { name: 'eth1', family: 'inet', method: 'dhcp' });
    await api.post('/interface/', { name: 'eth1', family: 'inet6', method: 'auto' });
    await api.post('/interface/', { name: 'wlan0', family: 'inet', method: 'manual', ssid: 'lab', security: 'open' });
    await api.post('/interface/', {
      name: 'eth0',
      family: 'inet6',
      method: 'static',
      address: '2001:db8::10',
      netmask: '64',
    });
    await restartNetworking(sim, api);
    const byName = Object.fromEntries(
      interfacesOf(await api.get('/interface/?config_state=active')).map((i) => [i.name, i]),
    );
    expect(byName.eth0?.families.inet?.in_use).toEqual({ address: '127.0.0.1', netmask: '255.0.0.0' });
    expect(byName.eth0?.families.inet6?.in_use).toEqual({ address: '2001:db8::10', netmask: '64' });
    expect(byName.eth1?.families.inet?.in_use).toEqual({
      address: '198.51.100.11',
      netmask: '255.255.255.0',
      gateway: '198.51.100.1',
    });
    expect(byName.eth1?.families.inet6?.in_use).toEqual({
      address: '2001:db8:100::11',
      netmask: '64',
      gateway: '2001:db8:100::1',
    });
    expect(byName.wlan0?.families.inet).toEqual({ method: 'manual', ssid: 'lab', security: 'open' });
  });

  it('is never part of the pending view', async () => {
    const eth0 = interfaceOf(await api.get('/interface/eth0/?config_state=pending'));
    expect(eth0.families.inet).toEqual({ method: 'dhcp' });
    expect(eth0['dot1x_state']).toBeUndefined();
  });
});

describe('DELETE /interface/{name}/?family=', () => {
  it('marks an active stanza for removal (pending shows null); it disappears at the restart', async () => {
    await api.post('/interface/', STANZA.eth1Static);
    await restartNetworking(sim, api);
    const deleted = await api.del('/interface/eth1/?family=inet');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect(interfaceOf(await api.get('/interface/eth1/?config_state=pending')).families).toEqual({ inet: null });
    expect((await api.get('/interface/eth1/?config_state=active')).status).toBe(200);
    await restartNetworking(sim, api);
    expect((await api.get('/interface/eth1/?config_state=active')).status).toBe(404);
    expect((await api.get('/interface/eth1/?config_state=pending')).status).toBe(404);
  });

  it('drops a stanza that was only pending', async () => {
    await api.post('/interface/', STANZA.eth1Static);
    expect((await api.del('/interface/eth1/?family=inet')).status).toBe(200);
    expect((await api.get('/interface/eth1/?config_state=pending')).status).toBe(404);
  });

  it('answers 404 when the interface has no such stanza, or it is already marked for removal', async () => {
    const none = await api.del('/interface/eth1/?family=inet');
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ success: false, error: 'Interface "eth1" has no inet stanza.' });
    expect((await api.del('/interface/eth0/?family=inet6')).status).toBe(404);
    expect((await api.del('/interface/eth0/?family=inet')).status).toBe(200);
    expect((await api.del('/interface/eth0/?family=inet')).status).toBe(404);
  });

  it('answers 404 for an interface the device does not have', async () => {
    const answer = await api.del('/interface/eth9/?family=inet');
    expect(answer.status).toBe(404);
    expect(answer.body.error).toBe('No interface "eth9" on this device.');
  });

  it('refuses a missing or unknown family', async () => {
    for (const query of ['', '?family=ipx']) {
      const answer = await api.del(`/interface/eth0/${query}`);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ success: false, error: 'Query parameter "family" must be "inet" or "inet6".' });
    }
  });
});

describe('PUT /interface/{name}/ updates a wireless stanza', () => {
  beforeEach(async () => {
    expect((await api.post('/interface/', STANZA.wlanPersonal)).status).toBe(200);
  });

  it('changes the given fields and keeps the rest (write-only ones included)', async () => {
    const answer = await api.put('/interface/wlan0/', {
      family: 'inet',
      method: 'static',
      address: '192.0.2.50',
      netmask: '255.255.255.0',
    });
    expect(answer.body).toEqual({ success: true });
    const pending = await api.get('/interface/wlan0/?config_state=pending');
    expect(interfaceOf(pending).families.inet).toEqual({
      method: 'static',
      address: '192.0.2.50',
      netmask: '255.255.255.0',
      ssid: 'lab',
      security: 'wpa2_personal',
      passphrase_set: true,
    });
  });

  it('removes a field given as null', async () => {
    expect((await api.put('/interface/wlan0/', { family: 'inet', security: 'open', passphrase: null })).status).toBe(
      200,
    );
    const pending = await api.get('/interface/wlan0/?config_state=pending');
    expect(interfaceOf(pending).families.inet).toEqual({ method: 'dhcp', ssid: 'lab', security: 'open' });
  });

  it('accepts the same SSID but refuses a new one with 409', async () => {
    expect((await api.put('/interface/wlan0/', { family: 'inet', ssid: 'lab' })).status).toBe(200);
    const answer = await api.put('/interface/wlan0/', { family: 'inet', ssid: 'other' });
    expect(answer.status).toBe(409);
    expect(answer.body).toEqual({
      success: false,
      error:
        'Field "ssid" cannot be changed in place: delete the interface, restart networking, add it with the new SSID and restart networking again.',
    });
  });

  it('validates the result with the rules of POST', async () => {
    const answer = await api.put('/interface/wlan0/', { family: 'inet', passphrase: 'short' });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('Field "passphrase" must be 8 to 63 printable ASCII characters or 64 hex digits.');
  });

  it.each([
    [
      'a wired interface',
      '/interface/eth0/',
      { family: 'inet', mtu: 1500 },
      400,
      'PUT /interface/eth0/ updates wireless interfaces only; post the whole stanza with POST /interface/.',
    ],
    [
      'an interface the device lacks',
      '/interface/wlan9/',
      { family: 'inet' },
      404,
      'No interface "wlan9" on this device.',
    ],
    [
      'a family without stanza',
      '/interface/wlan0/',
      { family: 'inet6', ssid: 'lab' },
      404,
      'Interface "wlan0" has no inet6 stanza to update.',
    ],
    ['a missing family', '/interface/wlan0/', { ssid: 'lab' }, 400, 'Field "family" is required.'],
    ['an unknown family', '/interface/wlan0/', { family: 'ipx' }, 400, 'Field "family" must be "inet" or "inet6".'],
    [
      'another name in the body',
      '/interface/wlan0/',
      { family: 'inet', name: 'eth0' },
      400,
      'Field "name" must be "wlan0", the interface in the path.',
    ],
    ['a body that is not an object', '/interface/wlan0/', ['inet'], 400, 'Request body must be a JSON object.'],
  ])('refuses %s', async (_label, path, body, status, sentence) => {
    const answer = await api.put(path, body);
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({ success: false, error: sentence });
  });
});

describe('GET /appliance/capability', () => {
  it('describes the ports of the default m50-like model', async () => {
    const answer = await api.get('/appliance/capability');
    expect(answer.body).toEqual({
      success: true,
      interfaces: {
        eth0: { autoneg: true, speeds: [10, 100, 1000], duplex: ['half', 'full'] },
        eth1: { autoneg: true, speeds: [10, 100, 1000], duplex: ['half', 'full'] },
        wlan0: { wireless: true },
      },
    });
  });

  it('describes another built-in model', async () => {
    const m22 = await startSimulator({ model: 'm22' });
    const client = apiClient(m22);
    try {
      expect((await client.get('/appliance/capability')).body.interfaces).toEqual({
        eth0: { autoneg: true, speeds: [10, 100, 1000], duplex: ['half', 'full'] },
        wlan0: { wireless: true },
      });
    } finally {
      await client.close();
      await m22.close();
    }
  });
});
