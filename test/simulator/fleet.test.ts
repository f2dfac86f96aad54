import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../src/simulator/index.js';
import { apiClient, STANZA } from './sim-client.js';

/** Fleet mode: independent devices in one process, one manifest, one control server. */

let fleet: Fleet;

beforeAll(async () => {
  fleet = await startFleet(5, { restartMs: 50, serviceRateLimit: false });
});

afterAll(async () => {
  await fleet.close();
});

describe('startFleet', () => {
  it('serves each device on its own port with its own password and certificate', () => {
    const { devices } = fleet.manifest;
    expect(devices).toHaveLength(5);
    expect(new Set(devices.map((d) => d.url)).size).toBe(5);
    expect(new Set(devices.map((d) => d.password)).size).toBe(5);
    expect(new Set(devices.map((d) => d.fingerprint_sha256)).size).toBe(5);
    devices.forEach((d, i) => {
      expect(d).toEqual({
        index: i,
        url: fleet.devices[i]?.url,
        username: 'admin',
        password: fleet.devices[i]?.password,
        fingerprint_sha256: fleet.devices[i]?.fingerprintSha256,
        control_url: `${fleet.manifest.control_url}/_sim/devices/${i}`,
      });
    });
  });

  it('keeps devices independent', async () => {
    const [first, second] = fleet.devices;
    const a = apiClient(first!);
    const b = apiClient(second!);
    try {
      expect((await b.post('/interface/', STANZA.eth1Static)).status).toBe(200);
      expect((await a.get('/interface/eth1/?config_state=pending')).status).toBe(404);
      expect((await b.get('/interface/eth1/?config_state=pending')).status).toBe(200);
      // Each device takes only its own password.
      const wrong = apiClient(first!, { password: second!.password });
      try {
        expect((await wrong.get('/interface/?config_state=active')).status).toBe(401);
      } finally {
        await wrong.close();
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('controls one device under /_sim/devices/{n}/ and the whole fleet under /_sim/', async () => {
    const one = await request(`${fleet.manifest.devices[3]!.control_url}/state`);
    const state = ((await one.body.json()) as { state: { index: number; url: string } }).state;
    expect(state.index).toBe(3);
    expect(state.url).toBe(fleet.devices[3]?.url);

    const all = await request(`${fleet.manifest.control_url}/_sim/state`);
    const summary = (await all.body.json()) as { devices: { index: number; phase: string }[] };
    expect(summary.devices.map((d) => `${d.index}:${d.phase}`)).toEqual(['0:up', '1:up', '2:up', '3:up', '4:up']);

    await request(`${fleet.manifest.control_url}/_sim/faults`, {
      method: 'POST',
      body: JSON.stringify({ faults: ['latency=1ms'] }),
    });
    expect(fleet.devices.map((d) => d.state().faults)).toEqual(Array(5).fill(['latency=1ms']));
    await request(`${fleet.manifest.devices[2]!.control_url}/faults`, {
      method: 'POST',
      body: JSON.stringify({ faults: [] }),
    });
    expect(fleet.devices.map((d) => d.state().faults.length)).toEqual([1, 1, 0, 1, 1]);
    await request(`${fleet.manifest.control_url}/_sim/reset`, { method: 'POST' });
    expect(fleet.devices.map((d) => d.state().faults.length)).toEqual([0, 0, 0, 0, 0]);
  });

  it('refuses a fleet size it cannot serve', async () => {
    await expect(startFleet(0)).rejects.toThrow('--devices must be an integer from 1 to 2000.');
  });
});
