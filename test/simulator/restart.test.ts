import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/simulator/rate-limiter.js';
import type { SimulatorHandle, SimulatorOptions } from '../../src/simulator/index.js';
import { restartNetworking, STANZA, useSimulatorApi, waitForPhase, type ApiClient, interfaceOf } from './sim-client.js';

/** Networking restart and reboot: 202 first, then every connection dropped and refused, then pending is active. */

const device = useSimulatorApi({}, { scope: 'manual' });

/** This test's device, started with these options. */
async function start(options: SimulatorOptions): Promise<{ sim: SimulatorHandle; api: ApiClient }> {
  await device.start(options);
  return device;
}

function tcpRefused(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port });
    socket.on('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
}

describe('PUT /service/networking/?action=restart', () => {
  it('answers 202, refuses connections during the outage, then answers on the same port with pending made active', async () => {
    const { sim, api } = await start({ restartMs: 600, serviceRateLimit: false });
    await api.post('/interface/', STANZA.eth1Static);
    const port = sim.port;
    const answer = await api.put('/service/networking/?action=restart', {});
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ success: true });
    await waitForPhase(sim, 'restarting');
    expect(await tcpRefused(port)).toBe('ECONNREFUSED');
    await waitForPhase(sim, 'up');
    expect(sim.port).toBe(port);
    const active = await api.get('/interface/eth1/?config_state=active');
    expect(active.status).toBe(200);
    expect(interfaceOf(active).families.inet?.address).toBe('192.0.2.10');
    expect(sim.state().restarts).toBe(1);
  });

  it('drops connections that were open when the restart was accepted', async () => {
    const { sim, api } = await start({ restartMs: 300, serviceRateLimit: false });
    const socket = tlsConnect({ host: '127.0.0.1', port: sim.port, ca: sim.certificatePem });
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)));
    socket.on('error', () => undefined);
    expect((await api.put('/service/networking/?action=restart', {})).status).toBe(202);
    expect(await closed).toBe(true);
    await waitForPhase(sim, 'up');
  });

  it.each([
    [
      'another service',
      '/service/ntp/?action=restart',
      {},
      404,
      'No service "ntp"; the device has the service "networking".',
    ],
    ['another action', '/service/networking/?action=stop', {}, 400, 'Query parameter "action" must be "restart".'],
    ['no action', '/service/networking/', {}, 400, 'Query parameter "action" must be "restart".'],
    ['a body that is not JSON', '/service/networking/?action=restart', '{', 400, 'Request body is not valid JSON.'],
  ])('refuses %s', async (_label, path, body, status, sentence) => {
    const { sim, api } = await start({ restartMs: 100 });
    const answer = await api.put(path, body);
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({ success: false, error: sentence });
    expect(sim.state().phase).toBe('up');
  });

  it('limits service actions and answers 429 with Retry-After', async () => {
    const { sim, api } = await start({ restartMs: 50, serviceRateLimit: { perSecond: 10, perMinute: 2 } });
    for (let i = 0; i < 2; i++) await restartNetworking(sim, api);
    const limited = await api.put('/service/networking/?action=restart', {});
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.body).toEqual({
      success: false,
      error: `Too many service actions: at most 10 per second and 2 per minute; retry in ${retryAfter} s.`,
    });
    expect(sim.state().phase).toBe('up');
  });
});

describe('the service rate limiter (1 per second, 12 per minute by default)', () => {
  it('asks to wait for the second action within a second, and for the 13th within a minute', () => {
    let now = 0;
    const limiter = new RateLimiter({ perSecond: 1, perMinute: 12 }, () => now);
    expect(limiter.retryAfterSeconds()).toBe(0);
    limiter.record();
    now = 400;
    expect(limiter.retryAfterSeconds()).toBe(1);
    now = 1000;
    expect(limiter.retryAfterSeconds()).toBe(0);
    for (let i = 1; i < 12; i++) {
      limiter.record();
      now += 1000;
    }
    // 12 actions at t = 0 s .. 11 s; at 12 s the oldest leaves the window at 60 s.
    expect(now).toBe(12_000);
    expect(limiter.retryAfterSeconds()).toBe(48);
    now = 60_000;
    expect(limiter.retryAfterSeconds()).toBe(0);
  });
});

describe('PUT /appliance/?action=reboot', () => {
  it('answers 202, is away for the reboot time, and comes back with pending made active', async () => {
    const { sim, api } = await start({ rebootMs: 500, restartMs: 50 });
    await api.post('/interface/', STANZA.eth1Dhcp);
    const answer = await api.put('/appliance/?action=reboot', {});
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ success: true });
    await waitForPhase(sim, 'rebooting');
    expect(await tcpRefused(sim.port)).toBe('ECONNREFUSED');
    await waitForPhase(sim, 'up');
    expect((await api.get('/interface/eth1/?config_state=active')).status).toBe(200);
    expect(sim.state().reboots).toBe(1);
  });

  it('refuses another action', async () => {
    const { api } = await start({});
    const answer = await api.put('/appliance/?action=shutdown', {});
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, error: 'Query parameter "action" must be "reboot".' });
  });
});
