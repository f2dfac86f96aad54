import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ShownInterface, STANZA, useSimulatorApi, waitForPhase } from './sim-client.js';

/** The test-only control port: state with secrets redacted, request log, faults, reset. */

const { sim, api } = useSimulatorApi({ restartMs: 300, serviceRateLimit: false });

/** What the control port answers: only the fields these tests read are named, the rest is kept. */
const ControlBody = z.looseObject({
  state: z
    .looseObject({
      phase: z.string(),
      interfaces: z.looseObject({ pending: z.array(ShownInterface) }),
      requests: z.array(z.looseObject({ time: z.string() })),
    })
    .optional(),
  requests: z.array(z.unknown()).optional(),
  error: z.string().optional(),
});
type ControlBody = z.infer<typeof ControlBody>;

async function control(method: string, path: string, body?: unknown): Promise<{ status: number; body: ControlBody }> {
  const res = await request(`${sim.controlUrl}${path}`, {
    method: method as 'GET',
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: res.statusCode, body: ControlBody.parse(await res.body.json()) };
}

describe('the control port', () => {
  it('is plain HTTP on loopback, separate from the device', () => {
    expect(sim.controlUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/_sim$/);
    expect(new URL(sim.controlUrl).port).not.toBe(String(sim.port));
  });

  it('shows the whole state, and the request log with write-only values redacted', async () => {
    await api.post('/interface/', {
      name: 'eth1',
      family: 'inet',
      method: 'dhcp',
      wpa_key_mgmt: 'IEEE8021X',
      wpa_eap: 'MD5',
      wpa_identity: 'md5user',
      wpa_password: 'very-secret',
    });
    await api.put('/access_control/acl/', {
      action: 'permit',
      protocol: 'tcp',
      from_port: 22,
      to_port: 22,
      source_addresses: ['192.0.2.0/24'],
      interfaces: ['eth0'],
    });
    const { status, body } = await control('GET', '/state');
    expect(status).toBe(200);
    expect(JSON.stringify(body)).not.toContain('very-secret');
    expect(body.state).toMatchObject({
      phase: 'up',
      model: 'm50',
      management_interface: 'eth0',
      url: sim.url,
      fingerprint_sha256: sim.fingerprintSha256,
      acl: [{ protocol: 'tcp', from_port: 22 }],
      faults: [],
    });
    expect(body.state?.interfaces.pending[1]?.families.inet?.wpa_password_set).toBe(true);
    expect(body.state?.requests[0]).toMatchObject({
      method: 'POST',
      path: '/api/v1/interface/',
      query: {},
      status: 200,
      body: {
        name: 'eth1',
        family: 'inet',
        method: 'dhcp',
        wpa_key_mgmt: 'IEEE8021X',
        wpa_eap: 'MD5',
        wpa_identity: 'md5user',
        wpa_password: '(redacted)',
      },
    });
    expect(Date.parse(body.state?.requests[0]?.time ?? '')).not.toBeNaN();
  });

  it('lists and clears the request log', async () => {
    await api.get('/interface/?config_state=pending');
    const listed = await control('GET', '/requests');
    expect(listed.body.requests).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/api/v1/interface/',
        query: { config_state: 'pending' },
        status: 200,
      }),
    ]);
    expect((await control('DELETE', '/requests')).body).toEqual({ success: true });
    expect(sim.requests()).toEqual([]);
  });

  it('sets faults, and refuses a fault it cannot parse', async () => {
    const set = await control('POST', '/faults', { faults: ['error=1,times=1@GET /api/v1/interface/'] });
    expect(set.body).toEqual({ success: true, faults: ['error=1,times=1@GET /api/v1/interface/'] });
    expect((await api.get('/interface/?config_state=active')).status).toBe(500);
    expect((await api.get('/interface/?config_state=active')).status).toBe(200);
    const bad = await control('POST', '/faults', { faults: ['explode'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^Fault "explode": unknown kind "explode"/);
    const notList = await control('POST', '/faults', { faults: 'error=1' });
    expect(notList.status).toBe(400);
  });

  it('resets the device to its start configuration', async () => {
    await api.post('/interface/', STANZA.eth1Static);
    await api.put('/access_control/acl/', {
      action: 'permit',
      protocol: 'tcp',
      from_port: 22,
      to_port: 22,
      source_addresses: ['192.0.2.0/24'],
      interfaces: ['eth0'],
    });
    sim.setFaults(['latency=10ms']);
    expect((await control('POST', '/reset')).body).toEqual({ success: true });
    const state = sim.state();
    expect(state.interfaces.pending.map((i) => i.name)).toEqual(['eth0']);
    expect(state.acl).toEqual([]);
    expect(state.faults).toEqual([]);
  });

  it('keeps configuration and faults when asked', async () => {
    await api.post('/interface/', STANZA.eth1Static);
    sim.setFaults(['latency=10ms']);
    await control('POST', '/reset', { keep_config: true, keep_faults: true });
    expect(sim.state().interfaces.pending.map((i) => i.name)).toEqual(['eth0', 'eth1']);
    expect(sim.state().faults).toEqual(['latency=10ms']);
  });

  it('answers while the device is in an outage, and a reset ends the outage', async () => {
    await api.put('/service/networking/?action=restart', {});
    await waitForPhase(sim, 'restarting');
    expect((await control('GET', '/state')).body.state?.phase).toBe('restarting');
    await control('POST', '/reset');
    expect((await api.get('/interface/?config_state=active')).status).toBe(200);
  });

  it('answers 404 to an unknown path and 405 to a wrong method', async () => {
    expect((await control('GET', '/nothing')).status).toBe(404);
    expect((await control('PUT', '/state')).status).toBe(405);
    const url = new URL(sim.controlUrl);
    const other = await request(`${url.origin}/_sim/devices/3/state`);
    expect(other.statusCode).toBe(404);
    expect(await other.body.json()).toEqual({ success: false, error: 'No device 3; devices are 0 to 0.' });
  });
});
