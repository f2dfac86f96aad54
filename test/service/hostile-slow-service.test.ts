import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServiceWatch, type DataApi } from '../../src/service/index.js';
import { json, startHostileService, trickle, type HostileService } from '../support/hostile-service.js';
import { clientOf } from './service-fixtures.js';

/**
 * A service that answers one byte per second: every wait mpprov gives the service keeps its
 * length, whatever request is on the wire when it ends (the request's own deadline is longer).
 */

const services: HostileService[] = [];
const clients: DataApi[] = [];

afterEach(async () => {
  for (const api of clients.splice(0)) await api.close();
  for (const service of services.splice(0)) await service.close();
});

const FAST = { roundMs: 150, minGapMs: 50, lastAnswerGraceMs: 500 };
/** Vendor-true: no orgId, so the paths need the token's only organization. */
const MP = { id: 9, name: 'branch-mp1', resolvedIp: '198.51.100.7', connectionStatus: 'AVAILABLE' };

describe('a service that trickles', () => {
  it("the MP's organization asked while paths wait: the wait of wait_measuring_s is kept", async () => {
    const service = await startHostileService((req) =>
      req.path.startsWith('/v3/organization')
        ? trickle(JSON.stringify([{ id: 12, displayName: 'Branch Networks' }]))
        : req.path.startsWith('/v3/appliance')
          ? json([MP])
          : { status: 404, body: '' },
    );
    services.push(service);
    const { api } = clientOf(service, { requestTimeoutMs: 20_000 });
    clients.push(api);
    const watch = createServiceWatch(api, { timing: FAST });
    const connected = await watch.waitConnected('branch-mp1', { waitS: 3 });
    expect(connected.kind).toBe('connected');
    const started = Date.now();
    const outcomes = await watch.ensurePaths(connected.appliance ?? MP, [{ target: '192.0.2.80' }], { waitS: 1 });
    // Far less than the request's own 20 s: the wait ended it.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(outcomes).toEqual([
      {
        target: '192.0.2.80',
        created: false,
        measuring: false,
        sentence: 'path to 192.0.2.80 could not be made sure of: the wait of 1 s ran out before the service answered',
      },
    ]);
    expect(service.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    // The run's end: the request nobody waits for any more does not hold it up either.
    const closing = Date.now();
    await api.close();
    expect(Date.now() - closing).toBeLessThan(3_000);
  });

  it('path data trickling: the look is dropped when the wait ends, not held for the request deadline', async () => {
    const service = await startHostileService((req) =>
      req.path.startsWith('/v3/path/data')
        ? trickle('[{"pathId": 601, "data": {}}]')
        : req.path.startsWith('/v3/path?')
          ? json([{ id: 601, sourceAppliance: 'branch-mp1', target: '192.0.2.80', orgId: 12 }])
          : req.path.startsWith('/v3/path/status')
            ? json([])
            : { status: 404, body: '' },
    );
    services.push(service);
    const { api } = clientOf(service, { requestTimeoutMs: 20_000 });
    clients.push(api);
    const watch = createServiceWatch(api, { timing: FAST });
    const [outcome] = await watch.ensurePaths({ ...MP, orgId: 12 }, [{ target: '192.0.2.80' }], { waitS: 1 });
    expect(outcome).toMatchObject({ id: 601, created: false, measuring: false });
    // The round's request is abandoned with its last waiter, so the next path's round is not held up.
    await vi.waitFor(() => expect(service.open()).toBe(0), { timeout: 3_000, interval: 100 });
  });

  it("the token's organizations trickling while a round plans: an MP that comes later gets its round", async () => {
    const service = await startHostileService((req) =>
      req.path.startsWith('/v3/organization')
        ? trickle(JSON.stringify([{ id: 12, displayName: 'Branch Networks' }]))
        : req.path.startsWith('/v3/appliance?hostname=')
          ? json([{ ...MP, name: req.path.slice('/v3/appliance?hostname='.length) }])
          : { status: 404, body: '' },
    );
    services.push(service);
    const { api } = clientOf(service, { requestTimeoutMs: 20_000 });
    clients.push(api);
    const watch = createServiceWatch(api, { timing: FAST });
    // Two MPs of no known organization: the round asks for the token's only one first.
    const early = await Promise.all(['mp-a', 'mp-b'].map((h) => watch.waitConnected(h, { waitS: 1 })));
    expect(early.map((o) => o.kind)).toEqual(['unchecked', 'unchecked']);
    const late = await watch.waitConnected('mp-c', { waitS: 3 });
    expect(late).toMatchObject({ kind: 'connected', appliance: { name: 'mp-c' } });
  });
});
