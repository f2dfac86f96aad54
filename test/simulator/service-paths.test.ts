import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BRANCH_TOKEN, startServiceRig, vendorError, type ServiceRig } from './service-rig.js';

/** Network paths of the simulated service: list, create, targetLocation, delete, status, and every refusal. */

let rig: ServiceRig;
beforeAll(async () => {
  rig = await startServiceRig();
  rig.service.registerAppliance({ hostname: 'branch-12-mp1.example', name: 'branch-12-mp1', orgId: 12, id: 3141 });
  rig.service.registerAppliance({ hostname: 'branch-12-mp2', orgId: 12, resolvedIp: '198.51.100.22', id: 3142 });
  rig.service.registerAppliance({ hostname: 'hq-mp1', orgId: 40, id: 4001 });
});
afterAll(async () => {
  await rig?.close();
});
beforeEach(() => {
  rig.service.clearRequests();
});

const create = (body: unknown, token?: string) =>
  rig.call('POST', '/api/v3/path', { body, ...(token === undefined ? {} : { token }) });
const badRequest = (detail: string) => ({ status: 400, json: vendorError(400, 'Bad Request', detail) });

describe('POST /v3/path', () => {
  it('creates a path: 201 with the record, the source matched by name in any case', async () => {
    const answer = await create({ sourceAppliance: 'BRANCH-12-MP1', target: '192.0.2.80', orgId: 12 });
    expect(answer.status).toBe(201);
    expect(answer.json).toEqual({
      id: expect.any(Number) as number,
      pathName: 'branch-12-mp1 -> 192.0.2.80',
      sourceAppliance: 'branch-12-mp1',
      target: '192.0.2.80',
      orgId: 12,
      instrumentation: 'ONE_WAY',
    });
    const id = (answer.json as { id: number }).id;
    expect((await rig.get('/api/v3/path?orgId=12')).json).toContainEqual(answer.json);
    expect((await rig.get(`/api/v3/path/${id}/status`)).json).toEqual({ pathId: id, status: 'INDETERMINATE' });
  });

  it('a target that is another simulated MP (name, hostname or address) makes a TWO_WAY path', async () => {
    for (const target of ['branch-12-mp2', 'hq-mp1', '198.51.100.22']) {
      const answer = await create({ sourceAppliance: 'branch-12-mp1', target, orgId: 12, pathName: `to ${target}` });
      expect(answer).toMatchObject({ status: 201, json: { instrumentation: 'TWO_WAY', pathName: `to ${target}` } });
    }
  });

  it('the same (sourceAppliance, target) twice is 400, in any case', async () => {
    const first = await create({ sourceAppliance: 'branch-12-mp2', target: 'probe.example', orgId: 12 });
    expect(first.status).toBe(201);
    const id = (first.json as { id: number }).id;
    expect(await create({ sourceAppliance: 'Branch-12-MP2', target: 'PROBE.example', orgId: 12 })).toMatchObject(
      badRequest(`A path from branch-12-mp2 to PROBE.example already exists (id ${id})`),
    );
  });

  it('400 for a missing or unknown orgId, an unknown source, a targetLocation, a long pathName', async () => {
    const good = { sourceAppliance: 'branch-12-mp1', target: 'x.example' };
    expect(await create(good)).toMatchObject(badRequest('orgId is required (an integer)'));
    expect(await create({ ...good, orgId: '12' })).toMatchObject(badRequest('orgId is required (an integer)'));
    expect(await create({ ...good, orgId: 99 })).toMatchObject(badRequest('Unknown organization: 99'));
    expect(await create({ ...good, orgId: 12, sourceAppliance: 'nobody' })).toMatchObject(
      badRequest('Unknown sourceAppliance in organization 12: nobody'),
    );
    // Matched against the MPs' name, not their hostname, and within the organization.
    expect(await create({ ...good, orgId: 12, sourceAppliance: 'branch-12-mp1.example' })).toMatchObject({
      status: 400,
    });
    expect(await create({ ...good, orgId: 40, sourceAppliance: 'branch-12-mp1' })).toMatchObject({ status: 400 });
    expect(await create({ ...good, orgId: 12, targetLocation: 'Rack 4' })).toMatchObject(
      badRequest('targetLocation cannot be set when a path is created'),
    );
    expect(await create({ ...good, orgId: 12, pathName: 'p'.repeat(201) })).toMatchObject(
      badRequest('pathName must be 1 to 200 characters'),
    );
    expect(await create({ sourceAppliance: 'branch-12-mp1', orgId: 12 })).toMatchObject({ status: 400 });
    expect(await create({ sourceAppliance: 'branch-12-mp1', target: 'a b', orgId: 12 })).toMatchObject({ status: 400 });
    // A long target gets a default name cut to 200 characters.
    const long = await create({ ...good, orgId: 12, target: `${'t'.repeat(240)}.example` });
    expect(long.status).toBe(201);
    expect((long.json as { pathName: string }).pathName).toHaveLength(200);
    // Unknown keys are ignored; a 200-character name is fine.
    expect(await create({ ...good, orgId: 12, pathName: 'p'.repeat(200), colour: 'blue' })).toMatchObject({
      status: 201,
    });
  });

  it("an MP name used in two organizations: the source is the one of the path's organization", async () => {
    rig.service.registerAppliance({ hostname: 'twin.branch', name: 'twin', orgId: 12, id: 3150 });
    rig.service.registerAppliance({ hostname: 'twin.hq', name: 'twin', orgId: 40, id: 4050 });
    const answer = await create({ sourceAppliance: 'twin', target: 'twin-target.example', orgId: 40 });
    expect(answer).toMatchObject({ status: 201, json: { sourceAppliance: 'twin', orgId: 40 } });
    // A different source MP, so no duplicate.
    expect((await create({ sourceAppliance: 'twin', target: 'twin-target.example', orgId: 12 })).status).toBe(201);
  });

  it('403 for an organization the caller may not see', async () => {
    expect(await create({ sourceAppliance: 'hq-mp1', target: 'x.example', orgId: 40 }, BRANCH_TOKEN)).toMatchObject({
      status: 403,
      json: vendorError(403, 'Access is denied'),
    });
  });

  it('hostile bodies are 400, never a crash: bad JSON, not an object, no body, wrong type, huge', async () => {
    const post = (rawBody: string | Buffer, contentType = 'application/json') =>
      rig.call('POST', '/api/v3/path', { rawBody, headers: { 'content-type': contentType } });
    expect(await post('{"orgId": 12,')).toMatchObject(badRequest('The body is not valid JSON'));
    expect(await post('[1, 2]')).toMatchObject(badRequest('The body must be a JSON object'));
    expect(await post('null')).toMatchObject(badRequest('The body must be a JSON object'));
    expect(await rig.call('POST', '/api/v3/path')).toMatchObject(badRequest('A JSON body is required'));
    expect(await post('{"orgId": 12}', 'text/plain')).toMatchObject(
      badRequest('Content-Type must be application/json'),
    );
    const huge = Buffer.alloc(2 * 1024 * 1024, 0x20);
    expect(await post(huge)).toMatchObject(badRequest('The request body is too large'));
    expect((await rig.get('/api/v3/organization')).status).toBe(200);
  });
});

describe('targetLocation, delete, status', () => {
  it('PUT targetLocation sets it; the record then carries it', async () => {
    const created = await create({ sourceAppliance: 'branch-12-mp1', target: 'loc.example', orgId: 12 });
    const id = (created.json as { id: number }).id;
    const put = await rig.call('PUT', `/api/v3/path/${id}/targetLocation`, { body: { targetLocation: 'Rack 4' } });
    expect(put).toMatchObject({ status: 200, json: { id, targetLocation: 'Rack 4' } });
    expect((await rig.get('/api/v3/path')).json).toContainEqual(
      expect.objectContaining({ id, targetLocation: 'Rack 4' }),
    );
    expect(await rig.call('PUT', `/api/v3/path/${id}/targetLocation`, { body: { location: 'x' } })).toMatchObject({
      status: 400,
    });
    expect(
      await rig.call('PUT', '/api/v3/path/999999/targetLocation', { body: { targetLocation: 'x' } }),
    ).toMatchObject({ status: 404 });
  });

  it('DELETE removes a path (200), then 404; the pair may then be created again', async () => {
    const body = { sourceAppliance: 'branch-12-mp1', target: 'gone.example', orgId: 12 };
    const id = ((await create(body)).json as { id: number }).id;
    expect(await rig.call('DELETE', `/api/v3/path/${id}`)).toMatchObject({ status: 200, json: { id } });
    expect((await rig.call('DELETE', `/api/v3/path/${id}`)).json).toEqual(vendorError(404, 'Not found'));
    expect((await rig.get(`/api/v3/path/${id}/status`)).status).toBe(404);
    expect((await create(body)).status).toBe(201);
  });

  it('status per organization; a path of an organization the caller may not see is 404 for it', async () => {
    const hq = await create({ sourceAppliance: 'hq-mp1', target: 'hq.example', orgId: 40 });
    const id = (hq.json as { id: number }).id;
    const statuses = (await rig.get('/api/v3/path/status?orgId=40')).json as { pathId: number }[];
    expect(statuses).toContainEqual({ pathId: id, status: 'INDETERMINATE' });
    const org40 = rig.service.paths().filter((p) => p['orgId'] === 40);
    expect(statuses.map((p) => p.pathId)).toEqual(org40.map((p) => p['id']));
    expect((await rig.get(`/api/v3/path/${id}/status`, BRANCH_TOKEN)).status).toBe(404);
    expect((await rig.get('/api/v3/path/status?orgId=40', BRANCH_TOKEN)).status).toBe(403);
    const branchPaths = (await rig.get('/api/v3/path', BRANCH_TOKEN)).json as { orgId: number }[];
    expect(branchPaths.length).toBeGreaterThan(0);
    expect(branchPaths.every((p) => p.orgId === 12)).toBe(true);
  });

  it('non-numeric ids are 400, unknown query parameters 400, other methods 404', async () => {
    for (const path of ['/api/v3/path/abc/status', '/api/v3/path/1.5/data', '/api/v3/path/-2/status']) {
      expect(await rig.get(path)).toMatchObject(badRequest('The path id must be an integer'));
    }
    expect(await rig.call('DELETE', '/api/v3/path/x')).toMatchObject(badRequest('The path id must be an integer'));
    expect(await rig.get('/api/v3/path?org=12')).toMatchObject(badRequest('Unknown query parameter: org'));
    expect(await rig.get('/api/v3/path?orgId=1x')).toMatchObject(badRequest('orgId must be an integer'));
    expect((await rig.call('PATCH', '/api/v3/path')).status).toBe(404);
    expect((await rig.call('DELETE', '/api/v3/path')).status).toBe(404);
  });
});

describe('the request log', () => {
  it('names each path request by its kind, and counts them', async () => {
    const created = await create({ sourceAppliance: 'branch-12-mp2', target: 'count.example', orgId: 12 });
    const id = (created.json as { id: number }).id;
    await rig.get('/api/v3/path?orgId=12');
    await rig.call('PUT', `/api/v3/path/${id}/targetLocation`, { body: { targetLocation: 'x' } });
    await rig.get(`/api/v3/path/${id}/status`);
    await rig.get('/api/v3/path/status');
    await rig.get(`/api/v3/path/${id}/data`);
    await rig.get('/api/v3/path/data?orgId=12');
    await rig.call('DELETE', `/api/v3/path/${id}`);
    await rig.get('/api/v3/nowhere');
    expect(rig.service.requests().map((r) => `${r.kind} ${r.status}`)).toEqual([
      'path-create 201',
      'path-list 200',
      'path-location 200',
      'path-status 200',
      'path-status-list 200',
      'path-data 200',
      'path-data-bulk 200',
      'path-delete 200',
      'unknown 404',
    ]);
    expect(rig.service.requestCounts()).toEqual({
      'path-create': 1,
      'path-list': 1,
      'path-location': 1,
      'path-status': 1,
      'path-status-list': 1,
      'path-data': 1,
      'path-data-bulk': 1,
      'path-delete': 1,
      unknown: 1,
    });
  });
});
