import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { EMAIL, expectNoSecret, OTHER_TOKEN, PASSWORD, startService, TOKEN } from './service-fixtures.js';

/** The simulated data API over raw HTTPS (no product code): the model's answers, errors, limits and statuses. */

let service: ServiceSimulator;
let agent: Agent;

beforeAll(async () => {
  service = await startService({ rateLimit: false, reconnectMs: 400 });
  service.addToken({ label: 'branch-only', value: 'tok-branch-only', orgIds: [12] });
  service.registerAppliance({ hostname: 'branch-12-mp1', orgId: 12, macAddress: '00:1b:21:3a:4f:10' });
  service.registerAppliance({ hostname: 'hq-mp1', orgId: 40, connectionStatus: 'NEW' });
  agent = new Agent({ connect: { ca: service.caPem } });
});
afterAll(async () => {
  await agent?.close();
  await service?.close();
});
beforeEach(() => {
  service.clearFaults();
  service.clearRequests();
});

interface Raw {
  status: number;
  retryAfter: string | undefined;
  json: unknown;
}

const TOKEN_HEADERS = { accept: 'application/json', authorization: `Token ${TOKEN}` };

async function get(
  path: string,
  headers: Record<string, string> = TOKEN_HEADERS,
  method = 'GET',
  on = service,
  through = agent,
): Promise<Raw> {
  const url = new URL(on.url);
  const response = await request(`${url.origin}${path}`, { dispatcher: through, method, headers });
  const text = await response.body.text();
  const retryAfter = response.headers['retry-after'];
  return {
    status: response.statusCode,
    retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
    json: JSON.parse(text) as unknown,
  };
}

/** The vendor client's error body (the simulator's default shapes). */
const error = (status: number, ...messages: string[]) => ({
  status,
  retryAfter: undefined,
  json: { httpStatusCode: status, messages },
});

describe('the error table, with exact messages', () => {
  it('401 in its three forms', async () => {
    expect(await get('/api/v3/organization', { accept: 'application/json' })).toEqual(
      error(401, 'Full authentication is required to access this resource'),
    );
    expect(
      await get('/api/v3/organization', { accept: 'application/json', authorization: 'Token tok-nobody' }),
    ).toEqual(error(401, 'Bad credentials'));
    expect(
      await get('/api/v3/organization', { accept: 'application/json', authorization: 'Basic !!not-base64' }),
    ).toEqual(error(401, 'Failed to decode basic authentication token'));
    const noColon = Buffer.from('just-an-email').toString('base64');
    expect(
      await get('/api/v3/organization', { accept: 'application/json', authorization: `Basic ${noColon}` }),
    ).toEqual(error(401, 'Failed to decode basic authentication token'));
    const wrong = Buffer.from(`${EMAIL}:wrong`).toString('base64');
    expect(await get('/api/v3/organization', { accept: 'application/json', authorization: `Basic ${wrong}` })).toEqual(
      error(401, 'Bad credentials'),
    );
  });

  it('Basic with the right e-mail and password works', async () => {
    const right = Buffer.from(`${EMAIL}:${PASSWORD}`).toString('base64');
    expect(
      (await get('/api/v3/organization', { accept: 'application/json', authorization: `Basic ${right}` })).status,
    ).toBe(200);
  });

  it('406 without Accept: application/json', async () => {
    expect(await get('/api/v3/organization', { authorization: `Token ${TOKEN}` })).toEqual(
      error(406, 'Not Acceptable'),
    );
    expect(await get('/api/v3/organization', { accept: 'text/html', authorization: `Token ${TOKEN}` })).toEqual(
      error(406, 'Not Acceptable'),
    );
    expect(
      (
        await get('/api/v3/organization', {
          accept: 'text/html, application/json;q=0.9',
          authorization: `Token ${TOKEN}`,
        })
      ).status,
    ).toBe(200);
  });

  it('404 for an endpoint it does not serve', async () => {
    expect(await get('/api/v3/nothing')).toEqual(error(404, 'Not found'));
    expect(await get('/v3/organization')).toEqual(error(404, 'Not found'));
    expect(await get('/api/v3/organization', undefined, 'DELETE')).toEqual(error(404, 'Not found'));
  });

  it('403 for a token without access', async () => {
    expect(
      await get('/api/v3/appliance', { accept: 'application/json', authorization: `Token ${OTHER_TOKEN}` }),
    ).toEqual(error(403, 'Access is denied'));
  });

  it('400 for parameters it does not take', async () => {
    expect(await get('/api/v3/appliance?mac=zz')).toEqual(error(400, 'Bad Request', 'mac must be aa:bb:cc:dd:ee:ff'));
    expect(await get('/api/v3/appliance?name=x')).toEqual(error(400, 'Bad Request', 'Unknown query parameter: name'));
    expect(await get('/api/v3/appliance?hostname=')).toEqual(error(400, 'Bad Request', 'hostname must not be empty'));
  });

  it('500 as a fault, for a given number of requests', async () => {
    service.setFaults({ error: { name: 'internal', count: 1 } });
    expect(await get('/api/v3/organization')).toEqual(error(500, 'Internal server error'));
    expect((await get('/api/v3/organization')).status).toBe(200);
  });
});

describe('what a caller sees', () => {
  it('only its organizations and their MPs, searched by hostname or MAC', async () => {
    const branch = { accept: 'application/json', authorization: 'Token tok-branch-only' };
    expect((await get('/api/v3/organization', branch)).json).toEqual([{ id: 12, displayName: 'Branch Networks' }]);
    expect((await get('/api/v3/appliance', branch)).json).toEqual([
      {
        id: 3141,
        name: 'branch-12-mp1',
        resolvedIp: '198.51.100.94',
        hostname: 'branch-12-mp1',
        orgId: 12,
        macAddress: '00:1b:21:3a:4f:10',
        connectionStatus: 'AVAILABLE',
      },
    ]);
    expect((await get('/api/v3/appliance?hostname=hq-mp1', branch)).json).toEqual([]);
    expect((await get('/api/v3/appliance?hostname=HQ-MP1')).json).toMatchObject([
      { hostname: 'hq-mp1', orgId: 40, connectionStatus: 'NEW' },
    ]);
    expect((await get('/api/v3/appliance?mac=00:1B:21:3A:4F:10')).json).toMatchObject([{ hostname: 'branch-12-mp1' }]);
  });
});

describe('the rate limit per caller', () => {
  it('answers 429 with Retry-After and the model body past the limit, for that caller only', async () => {
    const limited = await startService({ rateLimit: { requests: 5, windowMs: 1_500 } });
    const limitedAgent = new Agent({ connect: { ca: limited.caPem } });
    limited.addToken({ label: 'branch-only', value: 'tok-branch-only', orgIds: [12] });
    const ask = (authorization = `Token ${TOKEN}`) =>
      get('/api/v3/organization', { accept: 'application/json', authorization }, 'GET', limited, limitedAgent);
    try {
      const answers: Raw[] = [];
      for (let i = 0; i < 6; i++) answers.push(await ask());
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429]);
      const refused = answers[5];
      expect(refused?.json).toEqual({ httpStatusCode: 429, messages: ['Too Many Requests'] });
      expect(Number(refused?.retryAfter)).toBeGreaterThanOrEqual(1);
      expect((await ask('Token tok-branch-only')).status).toBe(200);
      const log = limited.requests();
      expect(log.map((e) => [e.caller, e.status])).toEqual([
        ...Array.from({ length: 5 }, () => ['technician', 200]),
        ['technician', 429],
        ['branch-only', 200],
      ]);
      expect(log[5]?.retryAfterS).toBe(Number(refused?.retryAfter));
      await sleep(Number(refused?.retryAfter) * 1000);
      expect((await ask()).status).toBe(200);
    } finally {
      await limitedAgent.close();
      await limited.close();
    }
  });
});

describe('connectionStatus follows the simulated device', () => {
  it('UNAVAILABLE from the restart until reconnectMs after it answers, AVAILABLE after', async () => {
    service.registerAppliance({ hostname: 'mp-restart', orgId: 12 });
    expect(service.connectionStatus('mp-restart')).toBe('AVAILABLE');
    service.restartStarted('mp-restart');
    expect(service.connectionStatus('mp-restart')).toBe('UNAVAILABLE');
    await sleep(500);
    expect(service.connectionStatus('mp-restart')).toBe('UNAVAILABLE');
    service.answeringAgain('mp-restart');
    expect((await get('/api/v3/appliance?hostname=mp-restart')).json).toMatchObject([
      { connectionStatus: 'UNAVAILABLE' },
    ]);
    await sleep(450);
    expect((await get('/api/v3/appliance?hostname=mp-restart')).json).toMatchObject([
      { connectionStatus: 'AVAILABLE' },
    ]);
  });

  it('stays UNAVAILABLE while its management port fails 802.1X, until a restart that works', async () => {
    service.registerAppliance({ hostname: 'mp-dot1x', orgId: 12 });
    service.restartStarted('mp-dot1x');
    service.answeringAgain('mp-dot1x');
    service.managementDot1xFailed('mp-dot1x');
    await sleep(500);
    expect(service.connectionStatus('mp-dot1x')).toBe('UNAVAILABLE');
    service.restartStarted('mp-dot1x');
    service.answeringAgain('mp-dot1x');
    await sleep(450);
    expect(service.connectionStatus('mp-dot1x')).toBe('AVAILABLE');
  });

  it('a status an administrator set (BLOCKED) is not changed by restarts', async () => {
    service.registerAppliance({ hostname: 'mp-blocked', orgId: 12 });
    service.setConnectionStatus('mp-blocked', 'BLOCKED');
    service.restartStarted('mp-blocked');
    service.answeringAgain('mp-blocked');
    await sleep(450);
    expect(service.connectionStatus('mp-blocked')).toBe('BLOCKED');
  });

  it('refuses a registration that does not fit the model', () => {
    expect(() => service.registerAppliance({ hostname: 'x', macAddress: 'nope' })).toThrow(
      /cannot register the appliance: macAddress/,
    );
    expect(() => service.restartStarted('not-registered')).toThrow(
      'the simulated service has no appliance with hostname "not-registered"',
    );
  });
});

describe('a token revoked mid-run', () => {
  it('works for the requests before, then answers Bad credentials', async () => {
    const value = service.addToken({ label: 'short-lived', value: 'tok-short-lived' });
    service.revokeToken('short-lived', { afterRequests: 2 });
    const headers = { accept: 'application/json', authorization: `Token ${value}` };
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await get('/api/v3/organization', headers)).status);
    expect(statuses).toEqual([200, 200, 401]);
  });
});

describe('the request log', () => {
  it('has timestamps and caller labels, and never a token or password', async () => {
    await get('/api/v3/appliance?hostname=branch-12-mp1');
    await get('/api/v3/organization', {
      accept: 'application/json',
      authorization: `Basic ${Buffer.from(`${EMAIL}:${PASSWORD}`).toString('base64')}`,
    });
    const log = service.requests();
    expect(log).toHaveLength(2);
    expect(log[0]).toMatchObject({
      method: 'GET',
      path: '/api/v3/appliance',
      query: { hostname: 'branch-12-mp1' },
      caller: 'technician',
      status: 200,
    });
    expect(log[1]).toMatchObject({ caller: EMAIL, status: 200 });
    expect(Date.parse(log[0]?.time ?? '')).toBe(log[0]?.atMs);
    expect((log[1]?.atMs ?? 0) >= (log[0]?.atMs ?? Infinity)).toBe(true);
    expectNoSecret([JSON.stringify(log)]);
  });
});
