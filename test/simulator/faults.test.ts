import { connect } from 'node:tls';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  FaultSyntaxError,
  formatFault,
  parseFault,
  type SimulatorHandle,
  type SimulatorOptions,
} from '../../src/simulator/index.js';
import {
  apiClient,
  restartNetworking,
  STANZA,
  useSimulatorApi,
  waitForPhase,
  type ApiClient,
  interfaceOf,
} from './sim-client.js';

/** Fault injection: per request (latency, 500s, dropped connections) and per restart. */

describe('the fault syntax KIND[=VALUE][,times=N][@[METHOD ]PATH]', () => {
  it.each([
    ['latency=250ms', { kind: 'latency', value: 250 }],
    [
      'latency=2s@GET /api/v1/interface/*',
      { kind: 'latency', value: 2000, method: 'GET', path: '/api/v1/interface/*' },
    ],
    ['error=30%,times=5@/api/v1/interface/', { kind: 'error', value: 0.3, times: 5, path: '/api/v1/interface/' }],
    [
      'drop=1,times=1@put /api/v1/service/*',
      { kind: 'drop', value: 1, times: 1, method: 'PUT', path: '/api/v1/service/*' },
    ],
    ['restart-delay=1m', { kind: 'restart-delay', value: 60_000 }],
    ['no-return', { kind: 'no-return' }],
    ['pending-stuck,times=1', { kind: 'pending-stuck', times: 1 }],
    ['drop-field=gateway', { kind: 'drop-field', value: 'gateway' }],
    ['new-cert', { kind: 'new-cert' }],
    [
      'throttle=2s,times=3@PUT /api/v1/service/*',
      { kind: 'throttle', value: 2000, times: 3, method: 'PUT', path: '/api/v1/service/*' },
    ],
    [
      'huge-body=64MiB@GET /api/v1/interface/',
      { kind: 'huge-body', value: 64 * 1024 * 1024, method: 'GET', path: '/api/v1/interface/' },
    ],
    ['huge-body=4096', { kind: 'huge-body', value: 4096 }],
    ['huge-body=3KiB', { kind: 'huge-body', value: 3072 }],
    ['clock-offset=-2h', { kind: 'clock-offset', value: -7_200_000 }],
    ['clock-offset=3d', { kind: 'clock-offset', value: 259_200_000 }],
  ])('parses %s', (text, spec) => {
    expect(parseFault(text)).toEqual(spec);
    expect(parseFault(formatFault(parseFault(text)))).toEqual(spec);
  });

  it.each([
    [
      'explode',
      'Fault "explode": unknown kind "explode" (known: latency, error, drop, throttle, huge-body, restart-delay, no-return, pending-stuck, drop-field, new-cert, clock-offset). Syntax: KIND[=VALUE][,times=N][@[METHOD ]PATH].',
    ],
    ['latency', 'Fault "latency": "latency" needs a value. Syntax: KIND[=VALUE][,times=N][@[METHOD ]PATH].'],
    [
      'latency=soon',
      'Fault "latency=soon": "soon" is not a duration such as 250ms or 2s. Syntax: KIND[=VALUE][,times=N][@[METHOD ]PATH].',
    ],
    [
      'error=2',
      'Fault "error=2": "2" is not a rate from 0 to 1 or a percentage. Syntax: KIND[=VALUE][,times=N][@[METHOD ]PATH].',
    ],
    ['no-return=1', 'Fault "no-return=1": "no-return" takes no value. Syntax: KIND[=VALUE][,times=N][@[METHOD ]PATH].'],
    ['error=1,often', 'Fault "error=1,often": unknown option "often". Syntax: KIND[=VALUE][,times=N][@[METHOD ]PATH].'],
    [
      'new-cert@/api/v1/',
      'Fault "new-cert@/api/v1/": "new-cert" is global; only latency, error, drop, throttle, huge-body take @METHOD PATH. Syntax: KIND[=VALUE][,times=N][@[METHOD ]PATH].',
    ],
    [
      'huge-body=lots',
      'Fault "huge-body=lots": "lots" is not a size such as 8MiB or 4096. Syntax: KIND[=VALUE][,times=N][@[METHOD ]PATH].',
    ],
    ['throttle', 'Fault "throttle": "throttle" needs a value. Syntax: KIND[=VALUE][,times=N][@[METHOD ]PATH].'],
    [
      'clock-offset=soon',
      'Fault "clock-offset=soon": "soon" is not an offset such as -2h, 10m or 3d. Syntax: KIND[=VALUE][,times=N][@[METHOD ]PATH].',
    ],
  ])('refuses %s', (text, message) => {
    expect(() => parseFault(text)).toThrow(FaultSyntaxError);
    expect(() => parseFault(text)).toThrow(message);
  });
});

const device = useSimulatorApi({ restartMs: 50, serviceRateLimit: false }, { scope: 'manual' });
const { sim } = device;

/** This test's device with these faults (or other options). */
async function start(options: SimulatorOptions = {}): Promise<{ sim: SimulatorHandle; api: ApiClient }> {
  await device.start(options);
  return device;
}

describe('request faults', () => {
  it('answers 500 to the matching requests, as many times as asked', async () => {
    const { sim, api } = await start({ faults: ['error=1,times=1@POST /api/v1/interface/'] });
    expect((await api.get('/interface/?config_state=active')).status).toBe(200);
    const failed = await api.post('/interface/', STANZA.eth1Dhcp);
    expect(failed.status).toBe(500);
    expect(failed.body).toEqual({ success: false, error: 'Internal server error (injected fault).' });
    expect((await api.post('/interface/', STANZA.eth1Dhcp)).status).toBe(200);
    expect(sim.requests().map((r) => `${r.method} ${r.status} ${r.fault ?? ''}`)).toEqual([
      'GET 200 ',
      'POST 500 error',
      'POST 200 ',
    ]);
    expect(sim.state().faults).toEqual([]);
  });

  it('drops the connection without an answer', async () => {
    const { sim, api } = await start({ faults: ['drop=1,times=1@GET /api/v1/interface/*'] });
    await expect(api.get('/interface/eth0/?config_state=active')).rejects.toThrow();
    expect((await api.get('/interface/eth0/?config_state=active')).status).toBe(200);
    expect(sim.requests()[0]).toMatchObject({
      method: 'GET',
      path: '/api/v1/interface/eth0/',
      status: null,
      fault: 'drop',
    });
  });

  it('adds latency and still answers', async () => {
    const { sim, api } = await start();
    sim.setFaults(['latency=200ms@GET /api/v1/appliance/capability']);
    expect((await api.get('/appliance/capability')).status).toBe(200);
    expect((await api.get('/interface/?config_state=active')).status).toBe(200);
    expect(sim.requests().map((r) => r.fault)).toEqual(['latency=200ms', undefined]);
  });

  it('applies a global fault to every request, before authentication', async () => {
    const { api } = await start({ faults: ['error=1'] });
    const client = apiClient(sim, { password: 'wrong' });
    try {
      expect((await client.get('/interface/?config_state=active')).status).toBe(500);
      expect((await api.get('/appliance/capability')).status).toBe(500);
    } finally {
      await client.close();
    }
  });

  it('throttle: 429 with Retry-After in whole seconds, on the scoped requests only, as many times as asked', async () => {
    const { sim, api } = await start({ faults: ['throttle=1500ms,times=2@PUT /api/v1/service/*'] });
    expect((await api.get('/interface/?config_state=active')).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const refused = await api.put('/service/networking/?action=restart', {});
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('2');
      expect(refused.body).toEqual({ success: false, error: 'Too many requests (injected fault); retry in 2 s.' });
    }
    expect(sim.state().restarts).toBe(0);
    expect((await api.put('/service/networking/?action=restart', {})).status).toBe(202);
    expect(sim.requests().map((r) => `${r.method} ${r.status} ${r.fault ?? ''}`)).toEqual([
      'GET 200 ',
      'PUT 429 throttle',
      'PUT 429 throttle',
      'PUT 202 ',
    ]);
    expect(sim.state().faults).toEqual([]);
  });

  it('huge-body: a 200 of exactly that many bytes of JSON, chunked without a length, before authentication', async () => {
    const { sim } = await start({ faults: ['huge-body=300KiB,times=1@GET /api/v1/interface/'] });
    const client = apiClient(sim, { password: 'wrong' });
    try {
      const res = await request(`${sim.apiUrl}/interface/?config_state=active`, {
        dispatcher: new Agent({ connect: { ca: sim.certificatePem } }),
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-length']).toBeUndefined();
      expect(res.headers['transfer-encoding']).toBe('chunked');
      const text = await res.body.text();
      expect(Buffer.byteLength(text)).toBe(300 * 1024);
      expect(JSON.parse(text)).toMatchObject({ success: true });
      // The fault is used up: the next request meets the device (and its password check).
      expect((await client.get('/interface/?config_state=active')).status).toBe(401);
      expect(sim.requests().map((r) => `${r.status} ${r.fault ?? ''}`)).toEqual(['200 huge-body', '401 ']);
    } finally {
      await client.close();
    }
  });

  it('huge-body: stops writing when the client hangs up, and the device answers the next request', async () => {
    const { sim, api } = await start({ faults: ['huge-body=1GiB,times=1@GET /api/v1/appliance/capability'] });
    const dispatcher = new Agent({ connect: { ca: sim.certificatePem } });
    try {
      const res = await request(`${sim.apiUrl}/appliance/capability`, { dispatcher });
      let read = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        read += chunk.length;
        if (read > 1024 * 1024) break;
      }
      expect(read).toBeGreaterThan(1024 * 1024);
      expect((await api.get('/appliance/capability')).status).toBe(200);
    } finally {
      await dispatcher.close();
    }
  });

  it('leaves requests alone at rate 0', async () => {
    const { api } = await start({ faults: ['error=0', 'drop=0%'] });
    for (let i = 0; i < 5; i++) expect((await api.get('/interface/?config_state=active')).status).toBe(200);
  });
});

describe('restart faults', () => {
  it('restart-delay: the outage lasts far longer than the restart time', async () => {
    const { sim, api } = await start({ faults: ['restart-delay=60s'] });
    expect((await api.put('/service/networking/?action=restart', {})).status).toBe(202);
    await waitForPhase(sim, 'restarting');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(sim.state().phase).toBe('restarting');
    await expect(api.get('/interface/?config_state=active')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await sim.reset();
    expect((await api.get('/interface/?config_state=active')).status).toBe(200);
  });

  it('no-return: the device never comes back until reset', async () => {
    const { sim, api } = await start({ faults: ['no-return'] });
    await api.put('/service/networking/?action=restart', {});
    await waitForPhase(sim, 'gone');
    await expect(api.get('/interface/?config_state=active')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await sim.reset();
    expect((await api.get('/interface/?config_state=active')).status).toBe(200);
  });

  it('pending-stuck: pending does not become active', async () => {
    const { sim, api } = await start({ faults: ['pending-stuck,times=1'] });
    await api.post('/interface/', STANZA.eth1Static);
    await restartNetworking(sim, api);
    expect((await api.get('/interface/eth1/?config_state=active')).status).toBe(404);
    expect((await api.get('/interface/eth1/?config_state=pending')).status).toBe(200);
    await restartNetworking(sim, api);
    expect((await api.get('/interface/eth1/?config_state=active')).status).toBe(200);
  });

  it('drop-field: the active configuration comes back without a field', async () => {
    const { sim, api } = await start({ faults: ['drop-field=gateway'] });
    await api.post('/interface/', STANZA.eth1Static);
    await restartNetworking(sim, api);
    const active = await api.get('/interface/eth1/?config_state=active');
    expect(interfaceOf(active).families.inet).toEqual({
      method: 'static',
      address: '192.0.2.10',
      netmask: '255.255.255.0',
      in_use: { address: '192.0.2.10', netmask: '255.255.255.0' },
    });
  });

  it('new-cert: the device presents another certificate after the restart, and a pinned client fails', async () => {
    const { sim, api } = await start({ faults: ['new-cert,times=1'] });
    const before = sim.fingerprintSha256;
    const oldPem = sim.certificatePem;
    await restartNetworking(sim, api);
    expect(sim.fingerprintSha256).not.toBe(before);
    expect(sim.state().fingerprint_sha256).toBe(sim.fingerprintSha256);
    // The client pinned to the old certificate cannot talk to the device any more.
    await expect(api.get('/interface/?config_state=active')).rejects.toThrow();
    const presented = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: sim.port, rejectUnauthorized: false }, () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.end();
      });
      socket.on('error', reject);
    });
    expect(presented).toBe(sim.fingerprintSha256);
    expect(sim.certificatePem).not.toBe(oldPem);
    await sim.reset();
    expect(sim.fingerprintSha256).toBe(before);
  });
});
