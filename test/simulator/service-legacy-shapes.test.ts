import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceRig, type ServiceRig } from './service-rig.js';

/** `shapes: 'legacy'` (`--service-legacy-shapes`): the earlier model's answers, for the client's tolerance tests. */

let rig: ServiceRig;
beforeAll(async () => {
  rig = await startServiceRig({ shapes: 'legacy' });
  rig.service.registerAppliance({ hostname: 'branch-12-mp1', orgId: 12, macAddress: '00:1b:21:3a:4f:10', id: 3141 });
});
afterAll(async () => {
  await rig?.close();
});

describe('legacy shapes', () => {
  it('organizations carry name, appliances have no resolvedIp', async () => {
    expect(rig.service.shapes).toBe('legacy');
    expect((await rig.get('/api/v3/organization')).json).toEqual([
      { id: 12, name: 'Branch Networks' },
      { id: 40, name: 'Head Office' },
    ]);
    expect((await rig.get('/api/v3/appliance?hostname=branch-12-mp1')).json).toEqual([
      {
        id: 3141,
        name: 'branch-12-mp1',
        hostname: 'branch-12-mp1',
        orgId: 12,
        macAddress: '00:1b:21:3a:4f:10',
        connectionStatus: 'AVAILABLE',
      },
    ]);
  });

  it('errors are {status, message}, without the detail', async () => {
    expect((await rig.get('/api/v3/appliance?name=x')).json).toEqual({ status: 400, message: 'Bad Request' });
    expect((await rig.get('/api/v3/organization', 'tok-nobody')).json).toEqual({
      status: 401,
      message: 'Bad credentials',
    });
    expect((await rig.call('GET', '/api/v3/organization', { headers: { accept: 'text/html' } })).json).toEqual({
      status: 406,
      message: 'Not Acceptable',
    });
  });

  it('paths are served as in the vendor shapes', async () => {
    const created = await rig.call('POST', '/api/v3/path', {
      body: { sourceAppliance: 'branch-12-mp1', target: '192.0.2.80', orgId: 12 },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ sourceAppliance: 'branch-12-mp1', target: '192.0.2.80', orgId: 12 });
  });
});
