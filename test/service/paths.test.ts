import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createServiceWatch,
  type Appliance,
  type DataApi,
  type PathOutcome,
  type ServiceWatch,
} from '../../src/service/index.js';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { clientOf, expectNoSecret, startService, TOKEN, tokenCredentials } from './service-fixtures.js';

/**
 * ensurePaths and planPaths against the simulated service's network paths over HTTPS: created
 * when missing, found when there, never twice for one (MP, target) however the callers race, the
 * location set when it differs, then measuring as the service's data says; without the MP's
 * organization, said as such.
 */

let service: ServiceSimulator;
const clients: DataApi[] = [];
beforeAll(async () => {
  service = await startService({ reconnectMs: 0, pathDataMs: 300, pathSampleMs: 1_000 });
});
afterEach(async () => {
  for (const api of clients.splice(0)) await api.close();
});
afterAll(async () => service?.close());

const FAST = { roundMs: 200, minGapMs: 50, lastAnswerGraceMs: 1_000 };

let tokens = 0;
/** A watch on a client of its own token: the service's 50 requests per 10 s are per caller, and each test has its own. */
function watch(options: { orgId?: number } = {}): ServiceWatch {
  tokens += 1;
  const token = service.addToken({ label: `paths-${tokens}`, value: `${TOKEN}-${tokens}` });
  const { api } = clientOf(service, { requestTimeoutMs: 10_000, credentials: tokenCredentials(token) });
  clients.push(api);
  return createServiceWatch(api, { ...options, timing: FAST });
}

let counter = 0;
/** A fresh AVAILABLE MP of organization 12, as the post-check saw it. */
async function availableMp(on: ServiceWatch): Promise<Appliance> {
  counter += 1;
  const hostname = `path-mp${counter}`;
  service.registerAppliance({ hostname, orgId: 12 });
  const outcome = await on.waitConnected(hostname, { waitS: 10 });
  if (outcome.appliance === undefined) throw new Error(`${hostname}: ${outcome.sentence}`);
  return outcome.appliance;
}

const writes = () => service.requests().filter((r) => r.method !== 'GET');
const pathsOf = (name: string) =>
  service.paths().filter((p) => String(p.sourceAppliance).toLowerCase() === name.toLowerCase());

describe('ensurePaths', () => {
  it('creates the missing paths, then they measure', async () => {
    const w = watch();
    const mp = await availableMp(w);
    service.clearRequests();
    const outcomes = await w.ensurePaths(mp, [{ target: '192.0.2.80' }, { target: 'app.example.com' }], { waitS: 20 });
    expect(outcomes).toEqual([
      expect.objectContaining({ target: '192.0.2.80', created: true, measuring: true }),
      expect.objectContaining({ target: 'app.example.com', created: true, measuring: true }),
    ]);
    for (const outcome of outcomes) {
      expect(outcome.id).toEqual(expect.any(Number));
      expect(outcome.status).toEqual(expect.any(String));
      expect(outcome.sentence).toMatch(
        /^path to (192\.0\.2\.80|app\.example\.com): created, measuring \(the service says /,
      );
    }
    expect(writes().map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'POST /api/v3/path 201',
      'POST /api/v3/path 201',
    ]);
    expect(pathsOf(mp.name)).toHaveLength(2);
    // One list of the organization's paths answered both lookups.
    expect(service.requests().filter((r) => r.kind === 'path-list')).toHaveLength(1);
    expectNoSecret(
      outcomes.map((o) => JSON.stringify(o)),
      [TOKEN],
    );
  });

  it('finds a path that exists (name in another case) and creates nothing', async () => {
    const w = watch();
    const mp = await availableMp(w);
    await watch().ensurePaths(mp, [{ target: '192.0.2.81' }], { waitS: 20 });
    service.clearRequests();
    const [outcome] = await w.ensurePaths({ ...mp, name: mp.name.toUpperCase() }, [{ target: '192.0.2.81' }], {
      waitS: 20,
    });
    expect(outcome).toMatchObject({ created: false, measuring: true });
    expect(outcome?.sentence).toMatch(/^path to 192\.0\.2\.81: exists, measuring/);
    expect(writes()).toEqual([]);
  });

  it('two waiters of one watch, and two runs, racing for one path: one POST that creates, the rest read "exists"', async () => {
    const first = watch();
    const mp = await availableMp(first);
    const second = watch();
    service.clearRequests();
    const wanted = [{ target: '198.51.100.20' }];
    const outcomes = await Promise.all([
      first.ensurePaths(mp, wanted, { waitS: 20 }),
      first.ensurePaths(mp, wanted, { waitS: 20 }),
      second.ensurePaths(mp, wanted, { waitS: 20 }),
    ]);
    expect(pathsOf(mp.name)).toHaveLength(1);
    const created = outcomes.flat().filter((o) => o.created);
    expect(created.length).toBeLessThanOrEqual(2);
    expect(outcomes.flat().every((o) => o.measuring && o.id === pathsOf(mp.name)[0]?.id)).toBe(true);
    // One POST per watch at most; a second one is the service's 400 for a duplicate, read as "exists".
    const posts = writes().filter((r) => r.method === 'POST');
    expect(posts.length).toBeLessThanOrEqual(2);
    expect(posts.filter((r) => r.status === 201)).toHaveLength(1);
    expect(posts.filter((r) => r.status !== 201).map((r) => r.status)).toEqual(posts.length === 2 ? [400] : []);
  });

  it('sets the location when given and different, and only then', async () => {
    const w = watch();
    const mp = await availableMp(w);
    const [created] = await w.ensurePaths(mp, [{ target: '192.0.2.90', location: 'Datacenter Frankfurt' }], {
      waitS: 20,
    });
    expect(created).toMatchObject({ created: true, location: 'Datacenter Frankfurt' });
    expect(pathsOf(mp.name)[0]).toMatchObject({ targetLocation: 'Datacenter Frankfurt' });
    service.clearRequests();
    const [same] = await watch().ensurePaths(mp, [{ target: '192.0.2.90', location: 'Datacenter Frankfurt' }], {
      waitS: 20,
    });
    expect(same).toMatchObject({ created: false, location: 'Datacenter Frankfurt' });
    expect(writes()).toEqual([]);
    const [moved] = await watch().ensurePaths(mp, [{ target: '192.0.2.90', location: 'Datacenter Berlin' }], {
      waitS: 20,
    });
    expect(moved).toMatchObject({ created: false, location: 'Datacenter Berlin' });
    expect(writes().map((r) => `${r.method} ${r.path}`)).toEqual([`PUT /api/v3/path/${moved?.id}/targetLocation`]);
  });

  it('a path of an MP that is not AVAILABLE does not measure: said after the whole wait, with its status', async () => {
    const w = watch();
    const mp = await availableMp(w);
    service.restartStarted(mp.hostname ?? mp.name);
    const started = Date.now();
    const [outcome] = await w.ensurePaths(mp, [{ target: '192.0.2.99' }], { waitS: 2 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(outcome).toMatchObject({ created: true, measuring: false, status: 'INDETERMINATE' });
    expect(outcome?.sentence).toBe(
      'path to 192.0.2.99: created, not measuring after 2 s: no data since the restart (the service says INDETERMINATE)',
    );
    // Its last look was at the deadline.
    const looks = service.requests().filter((r) => r.kind === 'path-data-bulk');
    expect((looks.at(-1)?.atMs ?? 0) - started).toBeGreaterThanOrEqual(2_000 - 20);
  });

  it('data from before `since` does not count', async () => {
    const w = watch();
    const mp = await availableMp(w);
    const [measuring] = await w.ensurePaths(mp, [{ target: '192.0.2.98' }], { waitS: 20 });
    expect(measuring?.measuring).toBe(true);
    // The same path, asked for data since a time none of its elements reach.
    const [outcome] = await w.ensurePaths(mp, [{ target: '192.0.2.98' }], { waitS: 1, since: Date.now() + 60_000 });
    expect(outcome).toMatchObject({ created: false, measuring: false, id: measuring?.id });
  });

  it('without the MP organization: said as such, nothing written, the other MPs go on', async () => {
    const w = watch();
    // A vendor-true record: no orgId; the token sees two organizations and agent.yaml names none.
    const bare: Appliance = { id: 999_001, name: 'nowhere-mp', connectionStatus: 'AVAILABLE' };
    service.clearRequests();
    const [outcome] = await w.ensurePaths(bare, [{ target: '192.0.2.70' }], { waitS: 5 });
    expect(outcome).toEqual({
      target: '192.0.2.70',
      created: false,
      measuring: false,
      sentence:
        "path to 192.0.2.70 cannot be created: the service did not say the MP's organization; set service.org_id in agent.yaml",
    });
    expect(writes()).toEqual([]);
    const mp = await availableMp(w);
    const [other] = await w.ensurePaths({ ...mp, orgId: undefined }, [{ target: '192.0.2.71' }], { waitS: 20 });
    // Its organization was learnt from its record when it was confirmed.
    expect(other).toMatchObject({ created: true, measuring: true });
  });

  it('a vendor-true record (no hostname, no orgId, a name of its own) takes the organization it was listed in', async () => {
    const w = watch();
    counter += 1;
    const hostname = `path-mp${counter}`;
    service.registerAppliance({ hostname, name: `Branch MP ${counter}`, orgId: 12 });
    const confirmed = await w.waitConnected(hostname, { waitS: 10 });
    const record = confirmed.appliance;
    if (record === undefined) throw new Error(confirmed.sentence);
    const bare: Appliance = { id: record.id, name: record.name, connectionStatus: record.connectionStatus };
    const [outcome] = await w.ensurePaths(bare, [{ target: '192.0.2.73' }], { waitS: 20 });
    expect(outcome).toMatchObject({ created: true, measuring: true });
    expect(pathsOf(`Branch MP ${counter}`)).toHaveLength(1);
  });

  it('service.org_id stands in for a record without orgId', async () => {
    const w = watch({ orgId: 12 });
    counter += 1;
    service.registerAppliance({ hostname: `path-mp${counter}`, orgId: 12 });
    const [outcome] = await w.ensurePaths(
      { id: 1, name: `path-mp${counter}`, connectionStatus: 'AVAILABLE' },
      [{ target: '192.0.2.72' }],
      { waitS: 20 },
    );
    expect(outcome).toMatchObject({ created: true, measuring: true });
  });

  it('many MPs measure in shared rounds: data and status asked per organization, not per path', async () => {
    const w = watch();
    const mps = await Promise.all(Array.from({ length: 10 }, () => availableMp(w)));
    service.clearRequests();
    const outcomes: PathOutcome[][] = await Promise.all(
      mps.map((mp) => w.ensurePaths(mp, [{ target: '203.0.113.5' }], { waitS: 20 })),
    );
    expect(outcomes.flat().filter((o) => o.created && o.measuring)).toHaveLength(10);
    const counts = service.requestCounts();
    expect(counts['path-create']).toBe(10);
    expect(counts['path-list']).toBe(1);
    const reads = (counts['path-data-bulk'] ?? 0) + (counts['path-status-list'] ?? 0);
    expect(reads).toBeLessThanOrEqual(10);
    expect(counts['path-data'] ?? 0).toBe(0);
  });
});

describe('a service that misbehaves', () => {
  it('a malformed list, an oversized answer, a slow service: outcomes with the reason, within the wait', async () => {
    const w = watch();
    const mp = await availableMp(w);
    service.clearRequests();
    service.setFaults({ rawBody: { text: '{"paths": "\u001b[31mnot a list', count: 1 } });
    const [malformed] = await w.ensurePaths(mp, [{ target: '192.0.2.40' }], { waitS: 5 });
    expect(malformed).toMatchObject({ created: false, measuring: false });
    expect(malformed?.sentence).toMatch(/^path to 192\.0\.2\.40 could not be made sure of: the service at /);
    expect(writes()).toEqual([]);

    service.setFaults({ oversizedBody: { bytes: 8 * 1024 * 1024 } });
    const [oversized] = await w.ensurePaths(mp, [{ target: '192.0.2.41' }], { waitS: 2 });
    expect(oversized?.measuring).toBe(false);
    expect(oversized?.sentence).toMatch(/could not be made sure of: .*4 MiB|more than/);

    service.setFaults({ latencyMs: 5_000 });
    const started = Date.now();
    const [slow] = await w.ensurePaths(mp, [{ target: '192.0.2.42' }], { waitS: 1 });
    // The wait is kept: the answers still on their way are not waited for.
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(slow?.sentence).toBe(
      'path to 192.0.2.42 could not be made sure of: the wait of 1 s ran out before the service answered',
    );
    service.clearFaults();
    expectNoSecret([JSON.stringify([malformed, oversized, slow])], [TOKEN]);
  });
  it('a location the service refuses to set: said in the sentence, not retried, and the path still waited on', async () => {
    const w = watch();
    const mp = await availableMp(w);
    const [placed] = await w.ensurePaths(mp, [{ target: '192.0.2.95', location: 'Rack 1' }], { waitS: 20 });
    expect(placed).toMatchObject({ created: true, measuring: true, location: 'Rack 1' });
    service.clearRequests();
    service.setFaults({ error: { name: 'internal', count: 1 } });
    const [refused] = await w.ensurePaths(mp, [{ target: '192.0.2.95', location: 'Rack 2' }], { waitS: 20 });
    expect(writes().map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      `PUT /api/v3/path/${placed?.id}/targetLocation 500`,
    ]);
    // The location it has is the one said, and the path is still made sure of.
    expect(refused).toMatchObject({ created: false, measuring: true, location: 'Rack 1' });
    expect(refused?.sentence).toBe(
      'path to 192.0.2.95: exists, measuring (the service says SQA_NOT_VIOLATED); its location could not be set: ' +
        `the service at ${service.url} failed internally on PUT /v3/path/${placed?.id}/targetLocation ` +
        '(HTTP 500 "Internal server error"); retry later',
    );
    expect(pathsOf(mp.name)).toMatchObject([{ target: '192.0.2.95', targetLocation: 'Rack 1' }]);
  });
});

describe('planPaths', () => {
  it('says what would be created, exists or gets its location, and writes nothing', async () => {
    const w = watch();
    const mp = await availableMp(w);
    await w.ensurePaths(mp, [{ target: '192.0.2.60', location: 'Rack 4' }], { waitS: 20 });
    service.clearRequests();
    const plan = await watch().planPaths(mp.hostname ?? mp.name, [
      { target: '192.0.2.60', location: 'Rack 4' },
      { target: '192.0.2.60'.replace('60', '61') },
      { target: '192.0.2.60', location: 'Rack 5' },
    ]);
    expect(plan.map((p) => [p.target, p.action])).toEqual([
      ['192.0.2.60', 'exists'],
      ['192.0.2.61', 'create'],
      ['192.0.2.60', 'set-location'],
    ]);
    expect(plan[1]?.sentence).toBe('path to 192.0.2.61: would be created');
    expect(writes()).toEqual([]);
  });
});
