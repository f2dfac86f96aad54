import { request } from 'undici';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  describeBuiltInModel,
  loadAuthenticatorProfile,
  startSimulator,
  type AuthenticatorProfile,
} from '../../src/simulator/index.js';
import { KEY_PASSWORD, PFX_PASSWORD, useLabPki } from '../support/lab-pki.js';
import {
  apiClient,
  restartNetworking,
  useSimulatorApi,
  waitForPhase,
  type ApiClient,
  interfaceOf,
} from './sim-client.js';

/**
 * Switch ports that demand 802.1X, decided by the model backend after each networking restart:
 * every EAP type succeeding, every failure of the hostapd/wpa_supplicant lab, and the lockout of
 * the management interface with its reset through the control port.
 */

type Body = Record<string, unknown>;
const BASE = { name: 'eth1', family: 'inet', method: 'dhcp', wpa_key_mgmt: 'IEEE8021X' } as const;
const PEAP: Body = {
  ...BASE,
  wpa_eap: 'PEAP',
  wpa_identity: 'alice',
  wpa_anonymous_identity: 'anonymous',
  wpa_password: 'alicepass',
  wpa_phase1: 'peapver=0',
  wpa_phase2: 'auth=MSCHAPV2',
  wpa_ca_cert: 'ca.pem',
};
const TLS: Body = {
  ...BASE,
  wpa_eap: 'TLS',
  wpa_identity: 'client.lab.test',
  wpa_ca_cert: 'ca.pem',
  wpa_client_cert: 'client.pem',
  wpa_private_key: 'client.key',
};
const PEAP_TLS: Body = {
  ...BASE,
  wpa_eap: 'PEAP',
  wpa_identity: 'client.lab.test',
  wpa_anonymous_identity: 'anonymous',
  wpa_phase2: 'auth=TLS',
  wpa_ca_cert: 'ca.pem',
  wpa_ca_cert2: 'ca.pem',
  wpa_client_cert2: 'client.pem',
  wpa_private_key2: 'client.key',
};
const MD5: Body = { ...BASE, wpa_eap: 'MD5', wpa_identity: 'md5user', wpa_password: 'md5secret' };
const without = (body: Body, ...fields: string[]): Body =>
  Object.fromEntries(Object.entries(body).filter(([k]) => !fields.includes(k)));

const pki = useLabPki();
let profile: AuthenticatorProfile;
let peapOnly: AuthenticatorProfile;

beforeAll(async () => {
  profile = await loadAuthenticatorProfile(pki.path('port.yaml'));
  peapOnly = await loadAuthenticatorProfile(pki.path('peap-only.yaml'));
});

/** Uploads every file a case may name, each slot by the PKI file's own name. */
async function uploadAll(api: ApiClient): Promise<void> {
  const slot = (names: string[]) => Object.fromEntries(names.map((n) => [n, pki.read(n)] as const));
  const sets: [string, string[]][] = [
    ['wpa_ca_cert', ['ca.pem', 'rogue-ca.pem']],
    ['wpa_client_cert', ['client.pem', 'rogue-client.pem', 'expired-client.pem', 'future-client.pem']],
    [
      'wpa_private_key',
      [
        'client.key',
        'client.key.der',
        'client.pfx',
        'client-legacy.pfx',
        'client-encrypted.key',
        'rogue-client.key',
        'expired-client.key',
        'future-client.key',
        'other.key',
      ],
    ],
    ['wpa_ca_cert2', ['ca.pem', 'rogue-ca.pem']],
    ['wpa_client_cert2', ['client.pem', 'rogue-client.pem']],
    ['wpa_private_key2', ['client.key', 'client.pfx', 'rogue-client.key']],
  ];
  for (const [part, names] of sets) {
    for (const [name, content] of Object.entries(slot(names))) {
      const answer = await api.upload({ [part]: { name, content } });
      expect(answer.status).toBe(200);
    }
  }
}

describe('a switch port on eth1 demanding 802.1X', () => {
  const { sim, api } = useSimulatorApi(() => ({
    restartMs: 50,
    serviceRateLimit: false,
    switchPorts: { eth1: profile },
  }));

  beforeEach(async () => {
    await uploadAll(api);
  });

  async function outcome(stanza: Body): Promise<{ state: string; reason: string; inUse: unknown }> {
    const posted = await api.post('/interface/', stanza);
    expect(posted.body).toEqual({ success: true });
    await restartNetworking(sim, api);
    const view = await api.get('/interface/eth1/?config_state=active');
    const status = sim.state().dot1x['eth1'];
    // The API shows the model's view: the outcome is read from the control port's state.
    expect(view.body.interface).not.toHaveProperty('dot1x_state');
    return {
      state: status?.state ?? '',
      reason: status?.reason ?? '',
      inUse: interfaceOf(view).families.inet?.in_use,
    };
  }

  describe('authorizes', () => {
    it.each([
      ['PEAP with MSCHAPv2', PEAP, 'authorized by peap-mschapv2 as "alice"'],
      [
        'PEAP with MSCHAPv2 without a CA (no server check, as wpa_supplicant)',
        without(PEAP, 'wpa_ca_cert'),
        'authorized by peap-mschapv2 as "alice"',
      ],
      ['EAP-TLS with a PEM key', TLS, 'authorized by EAP-TLS as "client.lab.test"'],
      [
        'EAP-TLS with a DER key',
        { ...TLS, wpa_private_key: 'client.key.der' },
        'authorized by EAP-TLS as "client.lab.test"',
      ],
      [
        'EAP-TLS with an encrypted PEM key and its password',
        { ...TLS, wpa_private_key: 'client-encrypted.key', wpa_private_key_passwd: KEY_PASSWORD },
        'authorized by EAP-TLS as "client.lab.test"',
      ],
      [
        'EAP-TLS with a PFX and no client certificate',
        { ...without(TLS, 'wpa_client_cert'), wpa_private_key: 'client.pfx', wpa_private_key_passwd: PFX_PASSWORD },
        'authorized by EAP-TLS as "client.lab.test"',
      ],
      [
        'EAP-TLS with a legacy (RC2) PFX',
        {
          ...without(TLS, 'wpa_client_cert'),
          wpa_private_key: 'client-legacy.pfx',
          wpa_private_key_passwd: PFX_PASSWORD,
        },
        'authorized by EAP-TLS as "client.lab.test"',
      ],
      ['PEAP with inner EAP-TLS', PEAP_TLS, 'authorized by PEAP with inner EAP-TLS as "client.lab.test"'],
      [
        'PEAP with inner EAP-TLS from a PFX',
        {
          ...without(PEAP_TLS, 'wpa_client_cert2'),
          wpa_private_key2: 'client.pfx',
          wpa_private_key2_passwd: PFX_PASSWORD,
        },
        'authorized by PEAP with inner EAP-TLS as "client.lab.test"',
      ],
      ['EAP-MD5', MD5, 'authorized by md5 as "md5user"'],
    ])('%s', async (_label, stanza, reason) => {
      const result = await outcome(stanza);
      expect(result).toMatchObject({ state: 'authorized', reason });
      expect(result.inUse).toEqual({ address: '198.51.100.11', netmask: '255.255.255.0', gateway: '198.51.100.1' });
    });
  });

  describe('does not authorize', () => {
    it.each([
      ['a wrong PEAP password', { ...PEAP, wpa_password: 'WRONGpass' }, 'wrong password for identity "alice"'],
      ['a wrong MD5 password', { ...MD5, wpa_password: 'WRONGsecret' }, 'wrong password for identity "md5user"'],
      [
        'an unknown identity',
        { ...MD5, wpa_identity: 'mallory' },
        'identity "mallory" is unknown to the authentication server',
      ],
      [
        'a method the user may not use',
        { ...MD5, wpa_identity: 'alice', wpa_password: 'alicepass' },
        'identity "alice" may not use md5',
      ],
      [
        'a client certificate from another CA',
        { ...TLS, wpa_client_cert: 'rogue-client.pem', wpa_private_key: 'rogue-client.key' },
        "the authentication server rejects the client certificate: it was not issued by the port's client CA",
      ],
      [
        'an inner client certificate from another CA',
        { ...PEAP_TLS, wpa_client_cert2: 'rogue-client.pem', wpa_private_key2: 'rogue-client.key' },
        "the authentication server rejects the client certificate: it was not issued by the port's client CA",
      ],
      [
        'a key that does not match the certificate',
        { ...TLS, wpa_private_key: 'other.key' },
        'wpa_private_key "other.key" does not match the client certificate',
      ],
      [
        'a PFX with a wrong password',
        { ...without(TLS, 'wpa_client_cert'), wpa_private_key: 'client.pfx', wpa_private_key_passwd: 'wrong' },
        'the supplicant cannot open wpa_private_key "client.pfx" (wrong or missing wpa_private_key_passwd)',
      ],
      [
        'a PFX without its password',
        { ...without(TLS, 'wpa_client_cert'), wpa_private_key: 'client.pfx' },
        'the supplicant cannot open wpa_private_key "client.pfx" (wrong or missing wpa_private_key_passwd)',
      ],
      [
        'an encrypted key without its password',
        { ...TLS, wpa_private_key: 'client-encrypted.key' },
        'the supplicant cannot open wpa_private_key "client-encrypted.key" (wrong or missing wpa_private_key_passwd)',
      ],
      [
        "a server certificate the stanza's CA did not issue",
        { ...TLS, wpa_ca_cert: 'rogue-ca.pem' },
        'the supplicant rejects the authentication server: its certificate (CN=radius.lab.test) was not issued by wpa_ca_cert "rogue-ca.pem"',
      ],
      [
        "a PEAP server certificate the stanza's CA did not issue",
        { ...PEAP, wpa_ca_cert: 'rogue-ca.pem' },
        'the supplicant rejects the authentication server: its certificate (CN=radius.lab.test) was not issued by wpa_ca_cert "rogue-ca.pem"',
      ],
      [
        'an inner server certificate the second CA did not issue',
        { ...PEAP_TLS, wpa_ca_cert2: 'rogue-ca.pem' },
        'the supplicant rejects the authentication server: its certificate (CN=radius.lab.test) was not issued by wpa_ca_cert2 "rogue-ca.pem"',
      ],
      [
        '802.1X disabled on the port that demands it',
        { name: 'eth1', family: 'inet', method: 'dhcp' },
        '802.1X is disabled on the interface, but its switch port demands it',
      ],
    ])('%s', async (_label, stanza, reason) => {
      const result = await outcome(stanza);
      expect(result).toMatchObject({ state: 'unauthorized', reason });
      // No traffic, no DHCP lease.
      expect(result.inUse).toBeUndefined();
    });

    it('an expired client certificate', async () => {
      const result = await outcome({
        ...TLS,
        wpa_client_cert: 'expired-client.pem',
        wpa_private_key: 'expired-client.key',
      });
      expect(result.state).toBe('unauthorized');
      expect(result.reason).toMatch(/^the client certificate has expired \(valid to Jan {1,2}1 00:00:00 2021 GMT\)$/);
    });

    it('a client certificate that is not valid yet', async () => {
      const result = await outcome({
        ...TLS,
        wpa_client_cert: 'future-client.pem',
        wpa_private_key: 'future-client.key',
      });
      expect(result.state).toBe('unauthorized');
      expect(result.reason).toMatch(
        /^the client certificate is not valid yet \(valid from Jan {1,2}1 00:00:00 2099 GMT\)$/,
      );
    });
  });

  it('keeps a static address on an unauthorized interface (it carries no traffic, but holds the address)', async () => {
    const result = await outcome({
      ...MD5,
      method: 'static',
      address: '192.0.2.10',
      netmask: '255.255.255.0',
      wpa_password: 'WRONG',
    });
    expect(result.state).toBe('unauthorized');
    expect(result.inUse).toEqual({ address: '192.0.2.10', netmask: '255.255.255.0' });
  });

  it('decides with the files active after the restart, not with content uploaded since', async () => {
    await api.upload({ wpa_ca_cert: { name: 'trust.pem', content: pki.read('ca.pem') } });
    expect((await outcome({ ...TLS, wpa_ca_cert: 'trust.pem' })).state).toBe('authorized');
    await api.upload({ wpa_ca_cert: { name: 'trust.pem', content: pki.read('rogue-ca.pem') } });
    expect(sim.state().dot1x['eth1']?.state).toBe('authorized');
    await restartNetworking(sim, api);
    expect(sim.state().dot1x['eth1']?.state).toBe('unauthorized');
  });

  it('puts a VLAN on the port in the state of its parent', async () => {
    await api.post('/interface/', { ...MD5, wpa_password: 'WRONG' });
    await api.post('/interface/', { name: 'eth1.100', family: 'inet', method: 'dhcp', vlan_raw_device: 'eth1' });
    await restartNetworking(sim, api);
    const vlan = interfaceOf(await api.get('/interface/eth1.100/?config_state=active'));
    expect(sim.state().dot1x['eth1.100']?.state).toBe('disabled');
    expect(vlan.families.inet?.in_use).toBeUndefined();
  });

  it('carries traffic on ports that do not demand 802.1X: "authorized" with 802.1X, "disabled" without', async () => {
    await api.post('/interface/', {
      name: 'wlan0',
      family: 'inet',
      method: 'dhcp',
      ssid: 'corp',
      security: 'wpa2_enterprise',
      wpa_key_mgmt: 'WPA-EAP',
      wpa_eap: 'PEAP',
      wpa_identity: 'x',
      wpa_password: 'y',
      wpa_phase2: 'auth=MSCHAPV2',
    });
    await restartNetworking(sim, api);
    const states = Object.fromEntries(Object.entries(sim.state().dot1x).map(([name, status]) => [name, status.state]));
    expect(states).toEqual({ eth0: 'disabled', wlan0: 'authorized' });
  });
});

describe('a switch port that offers only PEAP', () => {
  it('refuses EAP-TLS: the EAP type is not allowed', async () => {
    const sim = await startSimulator({ restartMs: 50, serviceRateLimit: false, switchPorts: { eth1: peapOnly } });
    const api = apiClient(sim);
    try {
      await uploadAll(api);
      await api.post('/interface/', TLS);
      await restartNetworking(sim, api);
      expect(sim.state().dot1x['eth1']?.state).toBe('unauthorized');
      expect(sim.state().dot1x['eth1']?.reason).toBe(
        "EAP type TLS is not offered by the switch port's authentication server (it offers peap)",
      );
    } finally {
      await api.close();
      await sim.close();
    }
  });
});

describe('the management interface on a port demanding 802.1X', () => {
  const { sim, api } = useSimulatorApi(() => ({
    restartMs: 50,
    serviceRateLimit: false,
    switchPorts: { eth0: profile },
  }));

  const controlReset = async (body?: unknown) => {
    const res = await request(`${sim.controlUrl}/reset`, {
      method: 'POST',
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ success: true });
  };

  it("is reachable at start, before the port's first authentication round", async () => {
    const view = await api.get('/interface/eth0/?config_state=active');
    expect(view.status).toBe(200);
    expect(sim.state().dot1x['eth0']?.state).toBe('disabled');
  });

  it('stays reachable when its 802.1X satisfies the port', async () => {
    await api.post('/interface/', { ...MD5, name: 'eth0' });
    await restartNetworking(sim, api);
    expect(sim.state().dot1x['eth0']?.state).toBe('authorized');
  });

  it('locks the device out when it ends unauthorized, until POST /_sim/reset on the control port', async () => {
    await api.post('/interface/', { ...MD5, name: 'eth0', wpa_password: 'WRONGsecret' });
    expect((await api.put('/service/networking/?action=restart', {})).status).toBe(202);
    await waitForPhase(sim, 'locked-out');
    const state = sim.state();
    expect(state.lockout_reason).toBe(
      'management interface eth0 carries no traffic: wrong password for identity "md5user"',
    );
    await expect(api.get('/interface/?config_state=active')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // Still away well after the restart time: a lockout does not end by itself.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sim.state().phase).toBe('locked-out');
    await expect(api.get('/interface/?config_state=active')).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    await controlReset();
    expect(sim.state().phase).toBe('up');
    const view = await api.get('/interface/eth0/?config_state=active');
    expect(view.status).toBe(200);
    expect(interfaceOf(view).families).toEqual({
      inet: { method: 'dhcp', in_use: { address: '127.0.0.1', netmask: '255.0.0.0' } },
    });
  });

  it('locks the device out when 802.1X is turned off on it', async () => {
    await api.post('/interface/', { ...MD5, name: 'eth0' });
    await restartNetworking(sim, api);
    await api.post('/interface/', { name: 'eth0', family: 'inet', method: 'dhcp' });
    expect((await api.put('/service/networking/?action=restart', {})).status).toBe(202);
    await waitForPhase(sim, 'locked-out');
    expect(sim.state().lockout_reason).toBe(
      'management interface eth0 carries no traffic: 802.1X is disabled on the interface, but its switch port demands it',
    );
  });

  it('keeps the configuration on reset with keep_config', async () => {
    await api.post('/interface/', { ...MD5, name: 'eth0', wpa_password: 'WRONGsecret' });
    await api.put('/service/networking/?action=restart', {});
    await waitForPhase(sim, 'locked-out');
    await controlReset({ keep_config: true });
    const view = await api.get('/interface/eth0/?config_state=active');
    expect(interfaceOf(view).families.inet).toMatchObject({ method: 'dhcp', wpa_eap: 'MD5', wpa_password_set: true });
  });
});

describe('another management interface (--mgmt eth1)', () => {
  it('locks the device out when eth1 ends unauthorized, while eth0 does not matter', async () => {
    const sim = await startSimulator({
      restartMs: 50,
      serviceRateLimit: false,
      managementInterface: 'eth1',
      switchPorts: { eth1: profile },
      device: { ...describeBuiltInModel('m50'), active: [{ name: 'eth1', family: 'inet', method: 'dhcp' }] },
    });
    const api = apiClient(sim);
    try {
      const view = await api.get('/interface/eth1/?config_state=active');
      expect(interfaceOf(view).families.inet?.in_use).toEqual({ address: '127.0.0.1', netmask: '255.0.0.0' });
      await api.post('/interface/', { ...MD5, wpa_password: 'WRONG' });
      await api.put('/service/networking/?action=restart', {});
      await waitForPhase(sim, 'locked-out');
      expect(sim.state().lockout_reason).toBe(
        'management interface eth1 carries no traffic: wrong password for identity "md5user"',
      );
    } finally {
      await api.close();
      await sim.close();
    }
  });
});
