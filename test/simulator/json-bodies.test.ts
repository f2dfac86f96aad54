import { Agent, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.js';
import { apiClient, curl, waitFor, type ApiClient } from './sim-client.js';

/**
 * The transport rules of docs/device-model.md a client regression would break, driven with raw HTTP
 * (undici's request() with exactly the headers each case names, and the real curl binary): the
 * restart's `{}` body, `Content-Type: application/json` on every JSON body, and `config_state`
 * on both GETs of the interface resource. Each refusal is shown to change nothing.
 */

const RESTART = '/service/networking/?action=restart';
const RESTART_BODY =
  'PUT /service/networking/?action=restart needs the JSON body {} (with "Content-Type: application/json").';
const needsJson = (sent: string) =>
  `A JSON body needs the header "Content-Type: application/json"; this request sent ${sent}.`;
const RULE = {
  action: 'permit',
  protocol: 'tcp',
  from_port: 443,
  to_port: 443,
  source_addresses: ['192.0.2.0/24'],
  interfaces: ['eth0'],
};
const ETH1 = { name: 'eth1', family: 'inet', method: 'dhcp' };
const WLAN = {
  name: 'wlan0',
  family: 'inet',
  method: 'dhcp',
  ssid: 'lab',
  security: 'wpa2_personal',
  passphrase: 'correct horse',
};

let sim: SimulatorHandle;
let api: ApiClient;
let agent: Agent;
let auth: string;

beforeAll(async () => {
  sim = await startSimulator({ restartMs: 100, serviceRateLimit: false });
  api = apiClient(sim);
  agent = new Agent({ connect: { ca: sim.certificatePem } });
  auth = `Basic ${Buffer.from(`${sim.username}:${sim.password}`).toString('base64')}`;
});

afterAll(async () => {
  await api.close();
  await agent.close();
  await sim.close();
});

beforeEach(async () => {
  await sim.reset();
});

/** One request with exactly these headers (besides authorization) and this body. */
async function raw(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const res = await request(`${sim.apiUrl}${path}`, {
    method: method as 'PUT',
    dispatcher: agent,
    headers: { authorization: auth, ...headers },
    ...(body !== undefined ? { body } : {}),
  });
  return { status: res.statusCode, body: await res.body.json() };
}

const curlAuth = () => ['-k', '-u', `${sim.username}:${sim.password}`];
const refused = (error: string) => ({ status: 400, body: { success: false, error } });

describe('PUT /service/networking/?action=restart needs the body {} with Content-Type: application/json', () => {
  // The restart count survives a reset: each case compares with the count it started from.
  let restartsBefore = 0;
  beforeEach(() => {
    restartsBefore = sim.state().restarts;
  });
  const restarted = () => sim.state().restarts - restartsBefore;

  it('refuses a restart without a body (curl -X PUT without -d), and does not restart', async () => {
    const result = await curl([
      ...curlAuth(),
      '-X',
      'PUT',
      '-H',
      'Content-Type: application/json',
      `${sim.apiUrl}${RESTART}`,
    ]);
    expect({ status: result.status, body: JSON.parse(result.body) as unknown }).toEqual(refused(RESTART_BODY));
    expect(restarted()).toBe(0);
    expect(sim.state().phase).toBe('up');
  });

  it.each([
    ['an object with a field', '{"now": true}'],
    ['a list', '[]'],
    ['null', 'null'],
    ['a string', '"{}"'],
  ])('refuses %s as the body', async (_label, body) => {
    expect(await raw('PUT', RESTART, body, { 'content-type': 'application/json' })).toEqual(refused(RESTART_BODY));
    expect(restarted()).toBe(0);
  });

  it('refuses {} without a Content-Type header', async () => {
    expect(await raw('PUT', RESTART, '{}')).toEqual(refused(needsJson('none')));
    expect(restarted()).toBe(0);
  });

  it('refuses {} sent by curl -d without -H (application/x-www-form-urlencoded)', async () => {
    const result = await curl([...curlAuth(), '-X', 'PUT', '-d', '{}', `${sim.apiUrl}${RESTART}`]);
    expect({ status: result.status, body: JSON.parse(result.body) as unknown }).toEqual(
      refused(needsJson('"application/x-www-form-urlencoded"')),
    );
    expect(restarted()).toBe(0);
  });

  it('refuses {} as text/plain', async () => {
    expect(await raw('PUT', RESTART, '{}', { 'content-type': 'text/plain' })).toEqual(
      refused(needsJson('"text/plain"')),
    );
    expect(restarted()).toBe(0);
  });

  it('accepts {} as application/json with a charset parameter, in any letter case', async () => {
    expect(await raw('PUT', RESTART, '{ }', { 'content-type': 'Application/JSON; charset=utf-8' })).toEqual({
      status: 202,
      body: { success: true },
    });
    await waitFor(() => restarted() === 1 && sim.state().phase === 'up', 'the device to come back from its restart');
  });
});

describe('every JSON body needs Content-Type: application/json', () => {
  const cases: [string, string, string, unknown][] = [
    ['POST /interface/', 'POST', '/interface/', ETH1],
    ['PUT /interface/wlan0/', 'PUT', '/interface/wlan0/', { family: 'inet', passphrase: 'another horse' }],
    ['PUT /access_control/acl/', 'PUT', '/access_control/acl/', RULE],
    ['DELETE /access_control/acl/ with a rule', 'DELETE', '/access_control/acl/', RULE],
  ];

  /** The device as these requests would change it. */
  const snapshot = () => ({ interfaces: sim.state().interfaces.pending, acl: sim.state().acl });

  beforeEach(async () => {
    expect((await api.post('/interface/', WLAN)).status).toBe(200);
    expect((await api.put('/access_control/acl/', RULE)).status).toBe(200);
  });

  it.each(cases)('%s without the header is refused and changes nothing', async (_label, method, path, body) => {
    const before = snapshot();
    expect(await raw(method, path, JSON.stringify(body))).toEqual(refused(needsJson('none')));
    expect(snapshot()).toEqual(before);
  });

  it.each(cases)('%s as text/plain is refused and changes nothing', async (_label, method, path, body) => {
    const before = snapshot();
    expect(await raw(method, path, JSON.stringify(body), { 'content-type': 'text/plain; charset=utf-8' })).toEqual(
      refused(needsJson('"text/plain; charset=utf-8"')),
    );
    expect(snapshot()).toEqual(before);
  });

  it.each(cases)('%s from curl -d without -H is refused', async (_label, method, path, body) => {
    const result = await curl([...curlAuth(), '-X', method, '-d', JSON.stringify(body), `${sim.apiUrl}${path}`]);
    expect({ status: result.status, body: JSON.parse(result.body) as unknown }).toEqual(
      refused(needsJson('"application/x-www-form-urlencoded"')),
    );
  });

  it.each(cases)('%s with the header is accepted', async (_label, method, path, body) => {
    expect(await raw(method, path, JSON.stringify(body), { 'content-type': 'application/json' })).toEqual({
      status: 200,
      body: { success: true },
    });
  });

  it('judges the header before the bytes: invalid JSON without it is refused for the header', async () => {
    expect(await raw('POST', '/interface/', '{"name": ')).toEqual(refused(needsJson('none')));
    expect(await raw('POST', '/interface/', '{"name": ', { 'content-type': 'application/json' })).toEqual(
      refused('Request body is not valid JSON.'),
    );
  });

  it('needs no header on a request without a body: DELETE /access_control/acl/ removes every rule', async () => {
    expect(await raw('DELETE', '/access_control/acl/')).toEqual({ status: 200, body: { success: true } });
    expect(sim.state().acl).toEqual([]);
  });
});

describe('GET /interface/ and GET /interface/{name}/ need config_state', () => {
  const MISSING = 'Query parameter "config_state" is required: "active" or "pending".';
  const BAD = 'Query parameter "config_state" must be "active" or "pending".';

  it.each([
    ['/interface/', MISSING],
    ['/interface/eth0/', MISSING],
    ['/interface/?state=active', MISSING],
    ['/interface/?config_state=', BAD],
    ['/interface/?config_state=running', BAD],
    ['/interface/eth0/?config_state=ACTIVE', BAD],
  ])('refuses GET %s', async (path, error) => {
    const result = await curl([...curlAuth(), `${sim.apiUrl}${path}`]);
    expect({ status: result.status, body: JSON.parse(result.body) as unknown }).toEqual(refused(error));
  });

  it.each([
    '/interface/?config_state=active',
    '/interface/?config_state=pending',
    '/interface/eth0/?config_state=active',
  ])('answers GET %s', async (path) => {
    const result = await curl([...curlAuth(), `${sim.apiUrl}${path}`]);
    expect(result.status).toBe(200);
    expect(JSON.parse(result.body)).toMatchObject({ success: true });
  });
});

describe('paths as listed', () => {
  it('serves GET /appliance/capability without a trailing slash only, and says so', async () => {
    expect((await raw('GET', '/appliance/capability')).status).toBe(200);
    expect(await raw('GET', '/appliance/capability/')).toEqual({
      status: 404,
      body: {
        success: false,
        error:
          'No such endpoint: GET /api/v1/appliance/capability/ (this path has no trailing slash: /api/v1/appliance/capability).',
      },
    });
  });
});
