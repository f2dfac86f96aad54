import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/core/secret.js';
import { createAdminClient, type AclRule, type AdminApi } from '../../src/client/index.js';
import {
  DeviceHttpError,
  DeviceNotAnsweringError,
  DevicePinMismatchError,
  DeviceRefusedError,
  DeviceUnreachableError,
} from '../../src/client/index.js';
import { createSelfSignedCertificate } from '../../src/simulator/index.js';
import { useSimulator } from '../support/simulator-fixture.js';
import { failureOf } from '../support/failures.js';
import { clientFor, PASSWORD, type Recorded } from './client-fixtures.js';

/** Every endpoint against the device simulator, started on port 0 per test. */

const device = useSimulator({ password: PASSWORD, restartMs: 150, rebootMs: 250 }, { scope: 'test' });
const { sim } = device;
/** What the client below reported through onRetry and onWarning, for the device of this test. */
let seen: Recorded;
const api: AdminApi = device.attach(
  (s) => {
    const made = clientFor(s.url, { kind: 'fingerprint', sha256: s.fingerprintSha256 });
    seen = made.seen;
    return made.api;
  },
  (client) => client.close(),
);
/** A fresh simulator carrying these options (faults, rate limits) for the rest of the test. */
const restartWith = (options?: Parameters<typeof device.start>[0]) => device.start(options);

const ETH1 = {
  name: 'eth1',
  family: 'inet',
  method: 'static',
  address: '192.0.2.10',
  netmask: '255.255.255.0',
  gateway: '192.0.2.1',
} as const;
const RULE: AclRule = {
  action: 'permit',
  protocol: 'tcp',
  from_port: 443,
  to_port: 443,
  source_addresses: ['10.0.0.0/8'],
  interfaces: ['eth0'],
};

describe('interfaces', () => {
  it('lists the active configuration, in_use and interface-level fields included', async () => {
    // A field beyond the model (the simulator's rehearsal aid, shown only when asked for): the
    // client keeps it as it is, without relying on it.
    await restartWith({ showDot1xState: true });
    const interfaces = await api.listInterfaces('active');
    expect(interfaces).toHaveLength(1);
    expect(interfaces[0]).toMatchObject({
      name: 'eth0',
      configState: 'active',
      families: { inet: { method: 'dhcp', in_use: { address: '127.0.0.1' } } },
      extra: { dot1x_state: 'disabled' },
    });
  });

  it('posts a stanza: pending, not active, until networking restarts', async () => {
    await api.postStanza(ETH1);
    const fields = Object.fromEntries(Object.entries(ETH1).filter(([key]) => key !== 'name' && key !== 'family'));
    expect(await api.getInterface('eth1', 'pending')).toEqual({
      name: 'eth1',
      configState: 'pending',
      families: { inet: fields },
      extra: {},
    });
    expect(await api.getInterface('eth1', 'active')).toBeUndefined();
    expect(sim.requests().find((r) => r.method === 'POST')?.body).toEqual(ETH1);

    await api.restartNetworking();
    await api.waitUntilAnswering({ timeoutMs: 10_000 });
    const active = await api.getInterface('eth1', 'active');
    expect(active?.families.inet).toMatchObject(fields);
    expect(sim.state().restarts).toBe(1);
  });

  it('a stanza the device refuses: its sentence, the operation and the stanza', async () => {
    const error = await failureOf(
      api.postStanza({ name: 'eth1', family: 'inet', method: 'static', address: '192.0.2.10' }),
    );
    expect(error).toBeInstanceOf(DeviceRefusedError);
    const said = String(error.data?.['deviceMessage']);
    expect(said).toMatch(/netmask/);
    expect(error.message).toBe(`the device refused POST /interface/ (eth1 inet): ${said}`);
  });

  it('write-only values given as Secret reach the device and come back as <field>_set', async () => {
    await api.postStanza({
      name: 'eth1',
      family: 'inet',
      method: 'dhcp',
      wpa_key_mgmt: 'IEEE8021X',
      wpa_eap: 'PEAP',
      wpa_identity: 'mp-01',
      wpa_phase1: 'peapver=0',
      wpa_phase2: 'auth=MSCHAPV2',
      wpa_password: new Secret('inner-password'),
    });
    const pending = await api.getInterface('eth1', 'pending');
    expect(pending?.families.inet).toMatchObject({ wpa_password_set: true });
    expect(pending?.families.inet?.wpa_password).toBeUndefined();
  });

  it('deletes a stanza (pending null), and says so when there is none', async () => {
    await api.deleteStanza('eth0', 'inet');
    expect((await api.getInterface('eth0', 'pending'))?.families).toEqual({ inet: null });
    const error = await failureOf(api.deleteStanza('eth1', 'inet6'));
    expect(error).toBeInstanceOf(DeviceHttpError);
    expect(error.message).toBe(
      'the device has no such resource for DELETE /interface/eth1/?family=inet6 (HTTP 404): Interface "eth1" has no inet6 stanza.',
    );
  });

  it('updates a wireless stanza in place, and refuses an SSID change with 409', async () => {
    await api.postStanza({
      name: 'wlan0',
      family: 'inet',
      method: 'dhcp',
      ssid: 'lab',
      security: 'wpa2_personal',
      passphrase: new Secret('correct horse battery'),
    });
    await api.updateStanza('wlan0', { family: 'inet', passphrase: new Secret('another long passphrase') });
    expect(sim.requests().find((r) => r.method === 'PUT')?.body).toEqual({ family: 'inet', passphrase: '(redacted)' });
    const error = await failureOf(api.updateStanza('wlan0', { family: 'inet', ssid: 'other' }));
    expect(error).toBeInstanceOf(DeviceRefusedError);
    expect(error.message).toBe(
      'the device refused PUT /interface/wlan0/ (wlan0 inet) as a conflict with its current configuration: ' +
        'Field "ssid" cannot be changed in place: delete the interface, restart networking, add it with the new SSID and restart networking again.',
    );
  });
});

describe('files', () => {
  it('uploads certificate and key in one request and returns the stored names', async () => {
    const issued = createSelfSignedCertificate();
    const stored = await api.uploadFiles([
      { slot: 'wpa_ca_cert', filename: 'ca-3f9a1c.pem', bytes: new TextEncoder().encode(issued.certificatePem) },
      { slot: 'wpa_private_key', filename: 'key-77aa01.pem', bytes: new TextEncoder().encode(issued.privateKeyPem) },
    ]);
    expect(stored).toEqual({ wpa_ca_cert: 'ca-3f9a1c.pem', wpa_private_key: 'key-77aa01.pem' });
    expect(sim.state().files.map((f) => [f.slot, f.name])).toEqual([
      ['wpa_ca_cert', 'ca-3f9a1c.pem'],
      ['wpa_private_key', 'key-77aa01.pem'],
    ]);
    expect(sim.requests().filter((r) => r.path === '/api/v1/interface/file/')).toHaveLength(1);
  });

  it('two files of one slot (two interfaces, two CAs): one part per slot and request, as many requests as needed', async () => {
    const [a, b, c] = [createSelfSignedCertificate(), createSelfSignedCertificate(), createSelfSignedCertificate()];
    const pem = (text: string) => new TextEncoder().encode(text);
    const stored = await api.uploadFiles([
      { slot: 'wpa_ca_cert', filename: 'ca-aaaaaa.pem', bytes: pem(a.certificatePem) },
      { slot: 'wpa_ca_cert', filename: 'ca-bbbbbb.pem', bytes: pem(b.certificatePem) },
      { slot: 'wpa_ca_cert2', filename: 'ca2-cccccc.pem', bytes: pem(c.certificatePem) },
    ]);
    expect(stored).toEqual({ wpa_ca_cert: 'ca-bbbbbb.pem', wpa_ca_cert2: 'ca2-cccccc.pem' });
    expect(sim.state().files.map((f) => [f.slot, f.name])).toEqual([
      ['wpa_ca_cert', 'ca-aaaaaa.pem'],
      ['wpa_ca_cert', 'ca-bbbbbb.pem'],
      ['wpa_ca_cert2', 'ca2-cccccc.pem'],
    ]);
    expect(sim.requests().filter((r) => r.path === '/api/v1/interface/file/')).toHaveLength(2);
  });

  it('a file of the wrong kind: the device names the part', async () => {
    const error = await failureOf(
      api.uploadFiles([{ slot: 'wpa_ca_cert', filename: 'notes.txt', bytes: new TextEncoder().encode('hello') }]),
    );
    expect(error).toBeInstanceOf(DeviceRefusedError);
    expect(error.message).toBe(
      'the device refused POST /interface/file/ (wpa_ca_cert notes.txt): Part "wpa_ca_cert" must be a certificate (PEM or DER); "notes.txt" is not one.',
    );
  });

  it('nothing to upload: no request', async () => {
    expect(await api.uploadFiles([])).toEqual({});
    expect(sim.requests()).toEqual([]);
  });
});

describe('appliance and access control', () => {
  it('reads the capability', async () => {
    expect(await api.getCapability()).toEqual({
      interfaces: {
        eth0: { autoneg: true, speeds: [10, 100, 1000], duplex: ['half', 'full'] },
        eth1: { autoneg: true, speeds: [10, 100, 1000], duplex: ['half', 'full'] },
        wlan0: { wireless: true },
      },
    });
  });

  it('adds, lists and deletes a rule; deleting it twice says there is none', async () => {
    await api.addAcl(RULE);
    await api.addAcl(RULE);
    expect(await api.listAcl()).toEqual([RULE]);
    await api.deleteAcl(RULE);
    expect(await api.listAcl()).toEqual([]);
    const error = await failureOf(api.deleteAcl(RULE));
    expect(error.message).toBe(
      'the device has no such resource for DELETE /access_control/acl/ (tcp 443 from 10.0.0.0/8 on eth0) (HTTP 404): No such rule in the access control list.',
    );
  });

  it('reboots, and answers again afterwards', async () => {
    await api.reboot();
    await api.waitUntilAnswering({ timeoutMs: 10_000 });
    expect(sim.state().reboots).toBe(1);
  });
});

describe('restarts, outages and faults', () => {
  it('waitUntilAnswering reports progress while the device is away', async () => {
    // Away for 1 s: longer than the first probe's pause (250 ms), so at least one probe meets the outage.
    await restartWith({ restartMs: 1_000 });
    const attempts: [number, string][] = [];
    await api.restartNetworking();
    await api.waitUntilAnswering({
      timeoutMs: 10_000,
      onAttempt: (elapsed, reason) => attempts.push([elapsed, reason]),
    });
    expect(attempts.length).toBeGreaterThan(0);
    for (const [elapsed, reason] of attempts) {
      expect(elapsed).toBeGreaterThanOrEqual(0);
      expect(['connection refused', 'connection reset', 'the device closed the connection']).toContain(reason);
    }
    expect((await api.listInterfaces('active'))[0]?.name).toBe('eth0');
  });

  it('a second restart right after the first: the device answers 429, the client waits it out and the restart is accepted', async () => {
    await api.restartNetworking();
    await api.waitUntilAnswering({ timeoutMs: 10_000 });
    // Back within about 0.3 s, well inside the device's limit of one restart per second.
    await api.restartNetworking();
    await api.waitUntilAnswering({ timeoutMs: 10_000 });
    expect(sim.state().restarts).toBe(2);
    const limited = seen.retries.filter((r) => r.reason.includes('429'));
    expect(limited.length).toBeGreaterThan(0);
    for (const retry of limited) {
      expect(retry).toMatchObject({ method: 'PUT', path: '/service/networking/?action=restart' });
    }
  });

  it('a 429 while the device comes back: the wait takes it as "not yet", waits the Retry-After and goes on', async () => {
    await restartWith({ restartMs: 300 });
    await api.restartNetworking();
    sim.setFaults(['throttle=1000,times=1@GET /api/v1/interface/']);
    const reasons: string[] = [];
    const view = await api.waitUntilAnswering({ timeoutMs: 10_000, onAttempt: (_at, reason) => reasons.push(reason) });
    expect(view.map((i) => i.name)).toContain('eth0');
    expect(reasons).toContain('HTTP 429 (too many requests): the device asks to wait 1 s');
    expect(sim.requests().filter((r) => r.status === 429)).toHaveLength(1);
  });

  it('a device that does not come back: one sentence with the last reason', async () => {
    await restartWith({ faults: ['no-return'] });
    await api.restartNetworking();
    const error = await failureOf(api.waitUntilAnswering({ timeoutMs: 600 }));
    expect(error).toBeInstanceOf(DeviceNotAnsweringError);
    expect(error.code).toBe('MPPROV_DEVICE_NOT_ANSWERING');
    expect(error.message).toBe(
      `the device at ${sim.url} did not answer within 0.6 s (last attempt: connection refused)`,
    );
  });

  it('a device that comes back with a new certificate: the pin stops the wait at once', async () => {
    await restartWith({ faults: ['new-cert'] });
    const pinned = sim.fingerprintSha256;
    await api.restartNetworking();
    const error = await failureOf(api.waitUntilAnswering({ timeoutMs: 10_000 }));
    expect(error).toBeInstanceOf(DevicePinMismatchError);
    expect(error.message).toBe(
      `the device at ${sim.url} presented a certificate with SHA-256 fingerprint ${sim.fingerprintSha256}, but the configuration pins ${pinned}; no credentials were sent`,
    );
  });

  it('the wait can be cancelled', async () => {
    await restartWith({ faults: ['no-return'] });
    await api.restartNetworking();
    const controller = new AbortController();
    const waiting = api.waitUntilAnswering({
      timeoutMs: 30_000,
      signal: controller.signal,
      onAttempt: () => controller.abort(new Error('operator cancelled')),
    });
    expect((await failureOf(waiting)).message).toBe('operator cancelled');
  });

  it('a dropped GET is retried; a dropped POST is not', async () => {
    await restartWith({
      faults: ['drop=1,times=1@GET /api/v1/appliance/capability', 'drop=1,times=1@POST /api/v1/interface/'],
    });
    await api.getCapability();
    expect(seen.retries).toEqual([
      {
        method: 'GET',
        path: '/appliance/capability',
        attempt: 1,
        reason: `lost the connection to ${sim.url} during GET /appliance/capability: the device closed the connection`,
        delayMs: 250,
      },
    ]);
    const error = await failureOf(api.postStanza(ETH1));
    expect(error).toBeInstanceOf(DeviceUnreachableError);
    expect(error.message).toBe(
      `lost the connection to ${sim.url} during POST /interface/ (eth1 inet): the device closed the connection; the device may or may not have applied it`,
    );
    expect(sim.requests().filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('an injected 500 names the operation', async () => {
    await restartWith({ faults: ['error=1@GET /api/v1/interface/'] });
    const error = await failureOf(api.listInterfaces('pending'));
    expect(error.message).toBe(
      'the device failed internally on GET /interface/?config_state=pending (HTTP 500): Internal server error (injected fault).',
    );
  });

  it('wrong password: bad credentials', async () => {
    const trust = { kind: 'fingerprint', sha256: sim.fingerprintSha256 } as const;
    const wrong = createAdminClient({ url: sim.url, username: 'admin', password: new Secret('wrong'), trust });
    const error = await failureOf(wrong.listInterfaces('active'));
    await wrong.close();
    expect(error.message).toBe(`bad credentials for admin at ${sim.url}`);
  });
});
