import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BRANCH_TOKEN, RIG_TOKEN, startServiceRig, vendorError, type ServiceRig } from './service-rig.js';

/** `/v3/observer` of the simulated service: each rule of service-model.md, over real HTTPS on loopback. */

const ADMIN_TOKEN = 'tok-Bilby-5120-org-admin';
const HQ_TOKEN = 'tok-Dunnart-3391-hq-only';

let rig: ServiceRig;
beforeAll(async () => {
  rig = await startServiceRig({
    tokens: [
      { label: 'rig', value: RIG_TOKEN },
      { label: 'branch-only', value: BRANCH_TOKEN, orgIds: [12] },
      { label: 'admin', value: ADMIN_TOKEN, orgAdmin: true, orgIds: [12] },
      { label: 'hq-only', value: HQ_TOKEN, orgIds: [40] },
    ],
  });
});
afterAll(async () => {
  await rig?.close();
});
beforeEach(async () => {
  for (const token of [RIG_TOKEN, BRANCH_TOKEN, ADMIN_TOKEN, HQ_TOKEN])
    expect((await rig.call('DELETE', '/api/v3/observer', { token })).status).toBe(200);
  rig.service.clearRequests();
});

const NONE = {
  testEvents: false,
  seqEvents: false,
  sqaEvents: false,
  webAlertEvents: false,
  networkChangeEvents: false,
};
const post = (body: unknown, token = RIG_TOKEN) => rig.call('POST', '/api/v3/observer', { body, token });
const list = (token = RIG_TOKEN, query = '') => rig.get(`/api/v3/observer${query}`, token);
const badRequest = (detail: string) => ({ status: 400, json: vendorError(400, 'Bad Request', detail) });

describe('POST /v3/observer', () => {
  it('stores a configuration: 200 with every Observer field, blacklisted false, missing flags false', async () => {
    const answer = await post({ url: 'https://prov.example.net:8472/ev/a1', seqEvents: true, sqaEvents: true });
    expect(answer).toMatchObject({
      status: 200,
      json: {
        ...NONE,
        url: 'https://prov.example.net:8472/ev/a1',
        seqEvents: true,
        sqaEvents: true,
        blacklisted: false,
      },
    });
    expect(Object.keys(answer.json as object).sort()).toEqual([...Object.keys(NONE), 'blacklisted', 'url'].sort());
    expect((await list()).json).toEqual([answer.json]);
    expect(rig.service.requestCounts()).toMatchObject({ 'observer-post': 1, 'observer-list': 1 });
  });

  it('one server per kind per caller: 400 naming the kind and the URL that already has it', async () => {
    const first = 'https://alerts.example.net/hooks/netteam-7f3c2a9e1b';
    expect((await post({ url: first, seqEvents: true, webAlertEvents: true })).status).toBe(200);
    expect(await post({ url: 'https://prov.example.net/ev', sqaEvents: true, seqEvents: true })).toMatchObject(
      badRequest(`seqEvents already goes to ${first}`),
    );
    expect(await post({ url: 'http://other.example/ev', webAlertEvents: true })).toMatchObject(
      badRequest(`webAlertEvents already goes to ${first}`),
    );
    // Nothing was stored by the refusals; another kind to another server is fine.
    expect((await post({ url: 'https://prov.example.net/ev', sqaEvents: true })).status).toBe(200);
    expect(((await list()).json as { url: string }[]).map((o) => o.url)).toEqual([
      first,
      'https://prov.example.net/ev',
    ]);
    // The rule is per caller: another user may send the same kind elsewhere.
    expect((await post({ url: 'https://branch.example/ev', seqEvents: true }, BRANCH_TOKEN)).status).toBe(200);
  });

  it('a POST for a URL the caller has replaces its flags in place', async () => {
    await post({ url: 'https://a.example/ev', seqEvents: true });
    await post({ url: 'https://b.example/ev', testEvents: true });
    const replaced = await post({ url: 'https://a.example/ev', sqaEvents: true });
    expect(replaced.json).toEqual({ ...NONE, url: 'https://a.example/ev', sqaEvents: true, blacklisted: false });
    expect((await list()).json).toEqual([
      replaced.json,
      { ...NONE, url: 'https://b.example/ev', testEvents: true, blacklisted: false },
    ]);
    // seqEvents is free again.
    expect((await post({ url: 'https://b.example/ev', testEvents: true, seqEvents: true })).status).toBe(200);
  });

  it('400 for a body that is no configuration, and `blacklisted` in a body is ignored', async () => {
    expect(await post({ seqEvents: true })).toMatchObject(
      badRequest('url is required (the address of the server that receives events)'),
    );
    expect(await post({ url: 'ftp://x.example/ev' })).toMatchObject(
      badRequest('url must be an absolute http or https URL'),
    );
    expect(await post({ url: '/relative' })).toMatchObject(badRequest('url must be an absolute http or https URL'));
    expect(await post({ url: 'https://x.example/a b' })).toMatchObject(
      badRequest('url must not contain spaces or control characters'),
    );
    expect(await post({ url: `https://x.example/${'a'.repeat(2048)}` })).toMatchObject(
      badRequest('url must be at most 2048 characters'),
    );
    expect(await post({ url: 'https://x.example/ev', seqEvents: 'yes' })).toMatchObject(
      badRequest('seqEvents must be true or false'),
    );
    expect(
      await rig.call('POST', '/api/v3/observer', { rawBody: '{', headers: { 'content-type': 'application/json' } }),
    ).toMatchObject(badRequest('The body is not valid JSON'));
    expect(await post([])).toMatchObject(badRequest('The body must be a JSON object'));
    expect((await list()).json).toEqual([]);
    const stored = await post({ url: 'https://x.example/ev', seqEvents: true, blacklisted: true, extra: 1 });
    expect(stored.json).toEqual({ ...NONE, url: 'https://x.example/ev', seqEvents: true, blacklisted: false });
  });

  it('a caller has a bounded number of configurations', async () => {
    for (let i = 0; i < 16; i++) expect((await post({ url: `https://x.example/ev${i}` })).status).toBe(200);
    expect(await post({ url: 'https://x.example/one-more' })).toMatchObject(
      badRequest('A user has at most 16 observer configurations'),
    );
    // Replacing one of them is still possible.
    expect((await post({ url: 'https://x.example/ev3', seqEvents: true })).status).toBe(200);
  });

  it('needs credentials like every endpoint', async () => {
    const answer = await rig.call('POST', '/api/v3/observer', {
      body: { url: 'https://x.example/ev' },
      headers: { authorization: '' },
    });
    expect(answer).toMatchObject({
      status: 401,
      json: vendorError(401, 'Full authentication is required to access this resource'),
    });
    expect(rig.service.observers()).toEqual([]);
  });
});

describe('GET /v3/observer', () => {
  it("lists only the caller's configurations", async () => {
    await post({ url: 'https://rig.example/ev', seqEvents: true });
    await post({ url: 'https://branch.example/ev', seqEvents: true }, BRANCH_TOKEN);
    expect(((await list()).json as { url: string }[]).map((o) => o.url)).toEqual(['https://rig.example/ev']);
    expect(((await list(BRANCH_TOKEN)).json as { url: string }[]).map((o) => o.url)).toEqual([
      'https://branch.example/ev',
    ]);
    expect((await list(HQ_TOKEN)).json).toEqual([]);
  });

  it('allUsers=true: every user of the hierarchy for an Organization Admin, 403 for anyone else', async () => {
    await post({ url: 'https://rig.example/ev', seqEvents: true });
    await post({ url: 'https://branch.example/ev', sqaEvents: true }, BRANCH_TOKEN);
    await post({ url: 'https://hq.example/ev', sqaEvents: true }, HQ_TOKEN);
    await post({ url: 'https://admin.example/ev', testEvents: true }, ADMIN_TOKEN);
    const all = await list(ADMIN_TOKEN, '?allUsers=true');
    expect(all.status).toBe(200);
    // The admin's hierarchy is organization 12: the hq-only user's configuration is not in it.
    expect((all.json as { url: string }[]).map((o) => o.url).sort()).toEqual([
      'https://admin.example/ev',
      'https://branch.example/ev',
      'https://rig.example/ev',
    ]);
    expect((await list(ADMIN_TOKEN, '?allUsers=false')).json).toEqual([
      { ...NONE, url: 'https://admin.example/ev', testEvents: true, blacklisted: false },
    ]);
    for (const token of [RIG_TOKEN, BRANCH_TOKEN, HQ_TOKEN])
      expect(await list(token, '?allUsers=true')).toMatchObject({
        status: 403,
        json: vendorError(403, 'Access is denied'),
      });
    expect(await list(ADMIN_TOKEN, '?allUsers=yes')).toMatchObject(badRequest('allUsers must be true or false'));
    expect(await list(RIG_TOKEN, '?user=x')).toMatchObject(badRequest('Unknown query parameter: user'));
  });
});

describe('DELETE /v3/observer', () => {
  it("removes every configuration of the caller and no one else's", async () => {
    await post({ url: 'https://rig.example/seq', seqEvents: true });
    await post({ url: 'https://rig.example/sqa', sqaEvents: true });
    await post({ url: 'https://branch.example/ev', seqEvents: true }, BRANCH_TOKEN);
    const before = (await list(BRANCH_TOKEN)).text;
    const answer = await rig.call('DELETE', '/api/v3/observer');
    expect(answer).toMatchObject({ status: 200, json: [] });
    expect((await list()).json).toEqual([]);
    expect((await list(BRANCH_TOKEN)).text).toBe(before);
    // Both kinds are free again.
    expect((await post({ url: 'https://new.example/ev', seqEvents: true, sqaEvents: true })).status).toBe(200);
    expect(rig.service.requestCounts()).toMatchObject({ 'observer-delete': 1 });
  });
});
