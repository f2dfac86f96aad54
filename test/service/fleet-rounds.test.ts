import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServiceWatch, type ConnectionOutcome, type DataApi } from '../../src/service/index.js';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { busiestWindow, clientOf, expectNoSecret, startService, TOKEN } from './service-fixtures.js';

/**
 * Fleet rounds against the simulated service (vendor shapes) over HTTPS: the MPs a watch waits
 * for are asked about together, once per organization per round, and each wait keeps its own
 * deadline, with its last look at it.
 */

let service: ServiceSimulator;
const clients: DataApi[] = [];
beforeAll(async () => {
  service = await startService({ reconnectMs: 0 });
});
afterEach(async () => {
  for (const api of clients.splice(0)) await api.close();
});
afterAll(async () => service?.close());

function client(): DataApi {
  const { api } = clientOf(service, { requestTimeoutMs: 10_000 });
  clients.push(api);
  return api;
}

let counter = 0;
/** Fresh MPs of organization 12, restarting (UNAVAILABLE). */
function restarting(count: number): string[] {
  return Array.from({ length: count }, () => {
    counter += 1;
    const hostname = `round-mp${counter}`;
    service.registerAppliance({ hostname, orgId: 12 });
    service.restartStarted(hostname);
    return hostname;
  });
}

const applianceRequests = () => service.requests().filter((r) => r.path.startsWith('/api/v3/appliance'));
const described = (r: { path: string; query: Record<string, string> }) =>
  `${r.path}${Object.keys(r.query).length === 0 ? '' : `?${new URLSearchParams(r.query).toString()}`}`;

describe('rounds', () => {
  it('50 waiters are answered by one request per round', async () => {
    const hostnames = restarting(50);
    service.clearRequests();
    const watch = createServiceWatch(client(), { orgId: 12, timing: { roundMs: 300 } });
    let rounds = 0;
    const outcomes = await Promise.all(
      hostnames.map((hostname, index) =>
        watch.waitConnected(hostname, {
          waitS: 30,
          // Each round's answer reaches every waiter; after the second, the fleet comes back.
          onProgress: () => {
            if (index === 0 && ++rounds === 2) for (const h of hostnames) service.answeringAgain(h);
          },
        }),
      ),
    );
    expect(outcomes.map((o) => o.kind)).toEqual(hostnames.map(() => 'connected'));
    const asked = applianceRequests().map(described);
    expect(asked.length).toBeGreaterThanOrEqual(3);
    expect(new Set(asked)).toEqual(new Set(['/api/v3/appliance?orgId=12']));
    // Every waiter counted each request: one per round, none per MP.
    expect(outcomes.map((o) => o.polls)).toEqual(hostnames.map(() => asked.length));
    expectNoSecret(
      outcomes.map((o) => JSON.stringify(o)),
      [TOKEN],
    );
  });

  it('a lone waiter is asked for by hostname once, then by id', async () => {
    const [hostname = ''] = restarting(1);
    service.clearRequests();
    const watch = createServiceWatch(client(), { timing: { roundMs: 200 } });
    let looks = 0;
    const outcome = await watch.waitConnected(hostname, {
      waitS: 30,
      onProgress: () => {
        if (++looks === 3) service.answeringAgain(hostname);
      },
    });
    expect(outcome.kind).toBe('connected');
    const asked = applianceRequests().map(described);
    const id = outcome.appliance?.id;
    expect(asked[0]).toBe(`/api/v3/appliance?hostname=${hostname}`);
    expect(asked.slice(1)).toEqual(asked.slice(1).map(() => `/api/v3/appliance/${id}`));
    expect(asked.length).toBeGreaterThanOrEqual(4);
  });

  it('MPs whose organization is not known yet: the token sees two, so one list of every MP, then by organization', async () => {
    const hostnames = restarting(3);
    service.clearRequests();
    const watch = createServiceWatch(client(), { timing: { roundMs: 200 } });
    let looks = 0;
    const outcomes = await Promise.all(
      hostnames.map((hostname, index) =>
        watch.waitConnected(hostname, {
          waitS: 30,
          onProgress: () => {
            if (index === 0 && ++looks === 2) for (const h of hostnames) service.answeringAgain(h);
          },
        }),
      ),
    );
    expect(outcomes.map((o) => o.kind)).toEqual(['connected', 'connected', 'connected']);
    const asked = service.requests().map(described);
    expect(asked.slice(0, 3)).toEqual(['/api/v3/organization', '/api/v3/appliance', '/api/v3/appliance?orgId=12']);
    expect(new Set(asked.slice(2))).toEqual(new Set(['/api/v3/appliance?orgId=12']));
  });

  it('a service that answers 400 to hostname= is asked by list from then on, and matched by the client', async () => {
    const [hostname = ''] = restarting(1);
    service.setFaults({ refuseHostnameQuery: true });
    service.clearRequests();
    try {
      const watch = createServiceWatch(client(), { timing: { roundMs: 200 } });
      let looks = 0;
      const outcome = await watch.waitConnected(hostname.toUpperCase(), {
        waitS: 30,
        onProgress: () => {
          if (++looks === 2) service.answeringAgain(hostname);
        },
      });
      expect(outcome).toMatchObject({ kind: 'connected', appliance: { hostname } });
      const asked = service.requests().map((r) => `${described(r)} ${r.status}`);
      // Refused once, never asked that way again; the token sees two organizations, so every MP is listed once.
      expect(asked.slice(0, 3)).toEqual([
        `/api/v3/appliance?hostname=${hostname.toUpperCase()} 400`,
        '/api/v3/organization 200',
        '/api/v3/appliance 200',
      ]);
      expect(asked.filter((a) => a.includes('hostname='))).toHaveLength(1);
    } finally {
      service.clearFaults();
    }
  });

  it('200 MPs coming back over time: at most N/20 + 20 requests, no 429, each confirmed in the round after it came back', async () => {
    const hostnames = restarting(200);
    service.clearRequests();
    const watch = createServiceWatch(client(), { orgId: 12, timing: { roundMs: 250 } });
    const cameBack = new Map<string, number>();
    let looks = 0;
    // 25 MPs come back after each round's answer (as a run with concurrency brings them back).
    const bringBack = () => {
      for (const hostname of hostnames.slice(looks * 25, looks * 25 + 25)) {
        service.answeringAgain(hostname);
        cameBack.set(hostname, Date.now());
      }
      looks += 1;
    };
    const confirmedAt = new Map<string, number>();
    const outcomes: ConnectionOutcome[] = await Promise.all(
      hostnames.map((hostname, index) =>
        watch
          .waitConnected(hostname, {
            waitS: 60,
            onProgress: () => {
              if (index === hostnames.length - 1) bringBack();
            },
          })
          .then((outcome) => {
            confirmedAt.set(hostname, Date.now());
            return outcome;
          }),
      ),
    );
    expect(outcomes.filter((o) => o.kind === 'connected')).toHaveLength(200);
    const log = service.requests();
    expect(log.filter((r) => r.status === 429)).toEqual([]);
    expect(log.length).toBeLessThanOrEqual(200 / 20 + 20);
    expect(
      busiestWindow(
        log.map((r) => r.atMs),
        10_000,
      ),
    ).toBeLessThanOrEqual(50);
    // Confirmed by the first round after it came back: no other request came between.
    expect(cameBack.size).toBe(200);
    for (const [hostname, back] of cameBack) {
      const between = log.filter((r) => r.atMs >= back && r.atMs <= (confirmedAt.get(hostname) ?? 0));
      expect(between).toHaveLength(1);
    }
  }, 60_000);
});

describe('deadlines', () => {
  it('the last look is at the deadline, not a second before it', async () => {
    service.clearRequests();
    const watch = createServiceWatch(client());
    const started = Date.now();
    // Default rounds (2 s): looks at 0 and 2 s; the per-MP loop gave up after its look at 1 s.
    const outcome = await watch.waitConnected('never-registered-mp', { waitS: 2 });
    expect(outcome).toMatchObject({ kind: 'unknown', polls: 2, waitedMs: 2_000 });
    const times = applianceRequests().map((r) => r.atMs);
    expect(times).toHaveLength(2);
    expect((times[1] ?? 0) - started).toBeGreaterThanOrEqual(2_000 - 20);
  });

  it("one waiter's deadline ends only its own wait", async () => {
    const [short = '', long = ''] = restarting(2);
    const watch = createServiceWatch(client(), { orgId: 12, timing: { roundMs: 200 } });
    let looks = 0;
    const first = watch.waitConnected(short, { waitS: 1 });
    const second = watch.waitConnected(long, {
      waitS: 30,
      onProgress: () => {
        // Well after the short wait ended, the long one's MP comes back.
        if (++looks === 10) service.answeringAgain(long);
      },
    });
    expect(await first).toMatchObject({ kind: 'unavailable', waitedMs: 1_000 });
    expect(await second).toMatchObject({ kind: 'connected' });
    expect(looks).toBeGreaterThanOrEqual(10);
  });

  it("a caller's abort rejects only its wait, and the rounds go on for the others", async () => {
    const [left = '', stays = ''] = restarting(2);
    const watch = createServiceWatch(client(), { orgId: 12, timing: { roundMs: 200 } });
    const controller = new AbortController();
    const aborted = watch.waitConnected(left, { waitS: 30, signal: controller.signal });
    let looks = 0;
    const other = watch.waitConnected(stays, {
      waitS: 30,
      onProgress: () => {
        if (++looks === 2) controller.abort(new Error('SIGTERM'));
        if (looks === 4) service.answeringAgain(stays);
      },
    });
    await expect(aborted).rejects.toThrow('SIGTERM');
    expect(await other).toMatchObject({ kind: 'connected' });
  });
});
