import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BRANCH_TOKEN, startServiceRig, vendorError, type ServiceRig } from './service-rig.js';

/**
 * The simulated service's organizations and Monitoring Points in the vendor client's shapes
 * (its default), the queries GET /v3/appliance takes, and each refusal with its status and body.
 */

let rig: ServiceRig;
beforeAll(async () => {
  rig = await startServiceRig();
  rig.service.registerAppliance({
    hostname: 'Branch-12-MP1',
    name: 'branch-12-mp1',
    orgId: 12,
    macAddress: '00:1b:21:3a:4f:10',
    resolvedIp: '198.51.100.7',
    id: 3141,
  });
  rig.service.registerAppliance({ hostname: 'branch-12-mp2', orgId: 12, id: 3142 });
  rig.service.registerAppliance({ hostname: 'hq-mp1', orgId: 40, connectionStatus: 'NEW', id: 4001 });
});
afterAll(async () => {
  await rig?.close();
});
beforeEach(() => {
  rig.service.clearFaults();
  rig.service.clearRequests();
});

describe('vendor shapes', () => {
  it('organizations carry id and displayName', async () => {
    expect((await rig.get('/api/v3/organization')).json).toEqual([
      { id: 12, displayName: 'Branch Networks' },
      { id: 40, displayName: 'Head Office' },
    ]);
  });

  it('an appliance carries the four vendor fields plus hostname, orgId and macAddress', async () => {
    const answer = await rig.get('/api/v3/appliance/3141');
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      id: 3141,
      name: 'branch-12-mp1',
      resolvedIp: '198.51.100.7',
      connectionStatus: 'AVAILABLE',
      hostname: 'Branch-12-MP1',
      orgId: 12,
      macAddress: '00:1b:21:3a:4f:10',
    });
  });

  it('errors are {httpStatusCode, messages}; a 400 names what is wrong in a second message', async () => {
    expect((await rig.get('/api/v3/organization?x=1')).json).toEqual(
      vendorError(400, 'Bad Request', 'Unknown query parameter: x'),
    );
    expect((await rig.get('/api/v3/nothing')).json).toEqual(vendorError(404, 'Not found'));
    expect((await rig.get('/api/v3/organization', 'tok-nobody')).json).toEqual(vendorError(401, 'Bad credentials'));
  });
});

describe('GET /v3/appliance', () => {
  const names = async (query: string, token?: string) => {
    const answer = await rig.get(`/api/v3/appliance${query}`, token);
    expect(answer.status).toBe(200);
    return (answer.json as { name: string }[]).map((a) => a.name);
  };

  it('lists every MP the caller may see, or those of one organization', async () => {
    expect(await names('')).toEqual(['branch-12-mp1', 'branch-12-mp2', 'hq-mp1']);
    expect(await names('', BRANCH_TOKEN)).toEqual(['branch-12-mp1', 'branch-12-mp2']);
    expect(await names('?orgId=40')).toEqual(['hq-mp1']);
    expect(await names('?orgId=12&hostname=BRANCH-12-mp2')).toEqual(['branch-12-mp2']);
  });

  it('finds by exact hostname in any case and by MAC; an unknown MP is an empty list', async () => {
    expect(await names('?hostname=branch-12-mp1')).toEqual(['branch-12-mp1']);
    expect(await names('?hostname=branch-12')).toEqual([]);
    expect(await names('?mac=00:1B:21:3A:4F:10')).toEqual(['branch-12-mp1']);
    expect(await names('?hostname=nobody')).toEqual([]);
  });

  it('403 for an organization the caller may not see, or that does not exist', async () => {
    expect(await rig.get('/api/v3/appliance?orgId=40', BRANCH_TOKEN)).toMatchObject({
      status: 403,
      json: vendorError(403, 'Access is denied'),
    });
    expect((await rig.get('/api/v3/appliance?orgId=99')).status).toBe(403);
  });

  it('400 for an unknown, repeated or malformed parameter', async () => {
    expect((await rig.get('/api/v3/appliance?name=x')).json).toEqual(
      vendorError(400, 'Bad Request', 'Unknown query parameter: name'),
    );
    expect((await rig.get('/api/v3/appliance?orgId=12&orgId=40')).json).toEqual(
      vendorError(400, 'Bad Request', 'Query parameter given twice: orgId'),
    );
    expect((await rig.get('/api/v3/appliance?orgId=twelve')).json).toEqual(
      vendorError(400, 'Bad Request', 'orgId must be an integer'),
    );
    // A name made of control characters comes back bounded and without them.
    const hostile = encodeURIComponent(`\u001b[31m${'y'.repeat(500)}`);
    const answer = await rig.get(`/api/v3/appliance?${hostile}=1`);
    expect(answer.status).toBe(400);
    const detail = (answer.json as { messages: string[] }).messages[1] ?? '';
    expect([...detail].some((c) => c.charCodeAt(0) < 0x20)).toBe(false);
    expect(detail.length).toBeLessThan(100);
  });

  it('a service that refuses hostname= (a fault) answers 400, and orgId still works', async () => {
    rig.service.setFaults({ refuseHostnameQuery: true });
    expect((await rig.get('/api/v3/appliance?hostname=branch-12-mp1')).json).toEqual(
      vendorError(400, 'Bad Request', 'Unknown query parameter: hostname'),
    );
    expect(await names('?orgId=12')).toEqual(['branch-12-mp1', 'branch-12-mp2']);
    expect(rig.service.requests().map((r) => [r.kind, r.status, r.fault])).toEqual([
      ['appliance-list', 400, 'hostname-query: refused'],
      ['appliance-list', 200, undefined],
    ]);
  });

  it('statusWords faults reword the status in lists and in single records', async () => {
    rig.service.setFaults({ statusWords: { AVAILABLE: 'ONLINE' } });
    expect((await rig.get('/api/v3/appliance/3141')).json).toMatchObject({ connectionStatus: 'ONLINE' });
    expect((await rig.get('/api/v3/appliance?orgId=40')).json).toMatchObject([{ connectionStatus: 'NEW' }]);
  });
});

describe('GET /v3/appliance/{id}', () => {
  it('404 when unknown or not visible to the caller; 400 when the id is no integer', async () => {
    expect((await rig.get('/api/v3/appliance/9999')).json).toEqual(vendorError(404, 'Not found'));
    expect((await rig.get('/api/v3/appliance/4001', BRANCH_TOKEN)).json).toEqual(vendorError(404, 'Not found'));
    expect((await rig.get('/api/v3/appliance/4001')).status).toBe(200);
    for (const id of ['abc', '-1', '1e3', '%00']) {
      expect((await rig.get(`/api/v3/appliance/${id}`)).json).toEqual(
        vendorError(400, 'Bad Request', 'The appliance id must be an integer'),
      );
    }
  });
});

describe('Accept and the rate limit', () => {
  it('406 without Accept: application/json, on every endpoint', async () => {
    for (const path of ['/api/v3/organization', '/api/v3/appliance', '/api/v3/path', '/api/v3/path/501/data']) {
      const answer = await rig.call('GET', path, { headers: { accept: '' } });
      expect(answer.json).toEqual(vendorError(406, 'Not Acceptable'));
    }
  });

  it('429 with Retry-After and Too Many Requests past 50 requests in 10 s', async () => {
    const limited = await startServiceRig({ rateLimit: undefined });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 51; i++) statuses.push((await limited.get('/api/v3/organization')).status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(50);
      const refused = await limited.get('/api/v3/path');
      expect(refused.status).toBe(429);
      expect(refused.json).toEqual(vendorError(429, 'Too Many Requests'));
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(10);
      expect(limited.service.requestCounts()).toEqual({ 'organization-list': 51, 'path-list': 1 });
    } finally {
      await limited.close();
    }
  });
});
