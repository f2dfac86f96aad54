import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { checkService, createServiceWatch, type DataApi } from '../../src/service/index.js';
import { startLegacyService, type ErrorShape, type LegacyService } from '../support/legacy-service.js';
import { Secret } from '../../src/core/secret.js';
import { clientOf, expectNoSecret, PASSWORD, TOKEN, tokenCredentials } from './service-fixtures.js';

/**
 * The client against a service that answers in the older model's shapes (test/support/legacy-service.ts):
 * `name` for organizations, `{status, message}` errors (and text or empty bodies), no `orgId=` and no
 * `/v3/appliance/{id}`, a 400 for `hostname=` when told, fields and statuses mpprov does not know.
 * Nothing of it may crash or fail a check; what it says is said.
 */

const services: LegacyService[] = [];
const clients: DataApi[] = [];
afterEach(async () => {
  for (const api of clients.splice(0)) await api.close();
});
afterAll(async () => {
  for (const service of services) await service.close();
});

async function legacy(options: Partial<Parameters<typeof startLegacyService>[0]> = {}): Promise<LegacyService> {
  const service = await startLegacyService({
    token: TOKEN,
    appliances: [
      { id: 7, name: 'Branch MP one', hostname: 'branch-mp1', orgId: 12, connectionStatus: 'AVAILABLE' },
      { id: 8, name: 'Branch MP two', hostname: 'branch-mp2', orgId: 12, connectionStatus: 'UNAVAILABLE' },
      {
        id: 9,
        name: 'hq-mp1',
        hostname: 'hq-mp1',
        orgId: 12,
        connectionStatus: 'ONLINE',
        extra: { firmware: { version: '9.1' }, tags: ['a', 1, null], resolvedIp: 42 },
      },
    ],
    ...options,
  });
  services.push(service);
  return service;
}

function client(service: LegacyService, token = TOKEN): DataApi {
  const { api } = clientOf(service, { credentials: tokenCredentials(token) });
  clients.push(api);
  return api;
}

const FAST = { roundMs: 150, minGapMs: 50, lastAnswerGraceMs: 500 };

describe('the older model read as it is', () => {
  it('service check: organizations by name, appliances with hostname and orgId', async () => {
    const service = await legacy();
    const lines = await checkService(client(service), { trust: 'service.tls.ca' });
    expect(lines.map((l) => [l.check, l.ok])).toEqual([
      ['tls', true],
      ['token', true],
      ['organizations', true],
      ['appliances', true],
    ]);
    expect(lines[2]?.text).toBe('the token sees 1 organization(s): Branch Networks (12)');
    expect(lines[3]?.text).toBe('the token may read Monitoring Points: 3 listed (GET /v3/appliance)');
  });

  it('a service that refuses hostname= and orgId= is asked for everything once per round, and matched by the client', async () => {
    const service = await legacy({ refuseHostname: true });
    const watch = createServiceWatch(client(service), { timing: FAST });
    const outcome = await watch.waitConnected('BRANCH-MP1', { waitS: 5 });
    expect(outcome).toMatchObject({ kind: 'connected', appliance: { id: 7, name: 'Branch MP one' } });
    // One refusal of each query, then lists of everything: never the refused queries again.
    const second = await watch.waitConnected('branch-mp2', { waitS: 1 });
    expect(second).toMatchObject({ kind: 'unavailable', lastStatus: 'UNAVAILABLE' });
    const paths = service.requests().map((r) => `${r.path} ${r.status}`);
    expect(paths.filter((p) => p.includes('hostname='))).toEqual(['/api/v3/appliance?hostname=BRANCH-MP1 400']);
    expect(paths.filter((p) => p.endsWith(' 400'))).toHaveLength(paths.filter((p) => p.includes('=')).length);
    expect(paths.filter((p) => p.includes('orgId=')).length).toBeLessThanOrEqual(1);
    expect(paths.filter((p) => p === '/api/v3/appliance 200').length).toBeGreaterThan(1);
  });

  it('an unknown status and unknown fields are said as the service says them, not confirmed', async () => {
    const service = await legacy();
    const watch = createServiceWatch(client(service), { timing: FAST });
    const outcome = await watch.waitConnected('hq-mp1', { waitS: 1 });
    expect(outcome).toMatchObject({ kind: 'other-status', connected: false, lastStatus: 'ONLINE' });
    expect(outcome.sentence).toBe(
      'not confirmed after 1 s: the service says ONLINE, which is not a status mpprov knows (AVAILABLE means connected)',
    );
    // A resolvedIp that is not text is left out, not a broken answer.
    expect(outcome.appliance?.resolvedIp).toBeUndefined();
  });

  it('paths against a service without them: an outcome with the reason, never a throw', async () => {
    const service = await legacy();
    const watch = createServiceWatch(client(service), { timing: FAST });
    const connected = await watch.waitConnected('branch-mp1', { waitS: 5 });
    const appliance = connected.appliance;
    if (appliance === undefined) throw new Error('the MP was not listed');
    const outcomes = await watch.ensurePaths(appliance, [{ target: '192.0.2.80' }], { waitS: 2 });
    expect(outcomes).toEqual([
      {
        target: '192.0.2.80',
        created: false,
        measuring: false,
        sentence: `path to 192.0.2.80 could not be made sure of: the service at ${service.url} has no endpoint GET /v3/path?orgId=12 (HTTP 404 "Not found"); check that service.url ends with /api`,
      },
    ]);
    expect(service.requests().filter((r) => r.method !== 'GET')).toEqual([]);
  });
});

describe('the three 401s and other errors, in every body shape', () => {
  const cases: [ErrorShape, string][] = [
    ['model', 'MPPROV_SERVICE_BAD_CREDENTIALS'],
    ['vendor', 'MPPROV_SERVICE_BAD_CREDENTIALS'],
    ['text', 'MPPROV_SERVICE_BAD_CREDENTIALS'],
    ['empty', 'MPPROV_SERVICE_BAD_CREDENTIALS'],
  ];
  it.each(cases)('a wrong token with %s error bodies ends the wait at once as a bad token', async (shape, code) => {
    const wrong = 'tok-Legacy-3321-never-shown';
    const service = await legacy({ errorShape: shape });
    const watch = createServiceWatch(client(service, wrong), { timing: FAST });
    const outcome = await watch.waitConnected('branch-mp1', { waitS: 5 });
    expect(outcome).toMatchObject({ kind: 'bad-token', errorCode: code, polls: 1 });
    expect(outcome.sentence).toContain('does not accept the access token');
    if (shape === 'model' || shape === 'vendor') expect(outcome.sentence).toContain('(HTTP 401 "Bad credentials")');
    else expect(outcome.sentence).toContain('(HTTP 401)');
    expectNoSecret([JSON.stringify(outcome), outcome.sentence], [wrong]);
  });

  it.each(['model', 'vendor'] as const)(
    'no credentials and undecodable credentials are told apart by the message of a %s body',
    async (shape) => {
      const service = await legacy({ errorShape: shape });
      const basic = clientOf(service, {
        credentials: { kind: 'basic', email: 'tech@branch.example', password: new Secret(PASSWORD) },
      }).api;
      clients.push(basic);
      await expect(basic.listOrganizations()).rejects.toMatchObject({ code: 'MPPROV_SERVICE_UNDECODABLE_CREDENTIALS' });
      // A proxy that strips the header: the service then says no credentials reached it.
      service.failNext(1, 401, 'Full authentication is required to access this resource');
      await expect(client(service).listOrganizations()).rejects.toMatchObject({
        code: 'MPPROV_SERVICE_NO_CREDENTIALS',
      });
    },
  );

  it('a 500 with an HTML body is retried within the wait and said', async () => {
    const service = await legacy({ errorShape: 'text' });
    service.failNext(1_000, 500, 'Internal server error');
    const watch = createServiceWatch(client(service), { timing: FAST });
    const outcome = await watch.waitConnected('branch-mp1', { waitS: 1 });
    expect(outcome.kind).toBe('unreachable');
    expect(outcome.polls).toBeGreaterThan(1);
    expect(outcome.sentence).toBe(
      `service unreachable: the service at ${service.url} failed internally on GET /v3/appliance?hostname=branch-mp1 (HTTP 500); retry later`,
    );
  });
});
