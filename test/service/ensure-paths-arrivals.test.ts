import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DataApi } from '../../src/service/data-api-client.js';
import type { Appliance } from '../../src/service/data-api-model.js';
import { ensurePaths, type PathWork } from '../../src/service/ensure-paths.js';
import { createMeasuringRounds, type MeasuringRounds } from '../../src/service/measuring-rounds.js';
import { createPathCatalogue } from '../../src/service/path-catalogue.js';
import { createWatchState } from '../../src/service/watch-state.js';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { clientOf, startService, TOKEN, tokenCredentials } from './service-fixtures.js';

/**
 * ensurePaths tells the measuring rounds which paths are on their way (measuring-rounds.ts: while
 * one is, the rounds keep the spacing of many waiting paths; once none is, they look soon after the
 * newest joined). A path announced and never let go would hold every later round at that spacing,
 * so each one is let go exactly when its wait joins, or when it ends without one: a failure, no
 * organization, the caller's abort. The real rounds, wrapped to count, against the simulated
 * service over HTTPS.
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

interface Counted {
  work: PathWork;
  /** Announced and not let go yet. */
  onTheirWay(): number;
  announced: number;
  /** For each wait that joined: how many paths were still on their way just then. */
  onTheirWayAtJoin: number[];
}

let tokens = 0;
function countedWork(): Counted {
  tokens += 1;
  const token = service.addToken({ label: `arrivals-${tokens}`, value: `${TOKEN}-arrivals-${tokens}` });
  const { api } = clientOf(service, { requestTimeoutMs: 10_000, credentials: tokenCredentials(token) });
  clients.push(api);
  const state = createWatchState(api, undefined);
  const real = createMeasuringRounds(state, FAST);
  const open = new Set<number>();
  let next = 0;
  const counted: Counted = {
    work: { state, catalogue: createPathCatalogue(api), measuring: undefined as unknown as MeasuringRounds },
    onTheirWay: () => open.size,
    announced: 0,
    onTheirWayAtJoin: [],
  };
  counted.work.measuring = {
    expect() {
      const id = next++;
      open.add(id);
      counted.announced += 1;
      const arrived = real.expect();
      // Let go more than once by design (at the join, at the path's end, at the call's end): the
      // rounds count the first.
      return () => {
        open.delete(id);
        arrived();
      };
    },
    wait(path) {
      counted.onTheirWayAtJoin.push(open.size);
      return real.wait(path);
    },
  };
  return counted;
}

let counter = 0;
function registeredMp(): Appliance {
  counter += 1;
  const hostname = `arrivals-mp${counter}`;
  service.registerAppliance({ hostname, orgId: 12 });
  return { id: 500_000 + counter, name: hostname, hostname, orgId: 12, connectionStatus: 'AVAILABLE' };
}

describe('paths on their way to the measuring rounds', () => {
  it('each created path is let go as its wait joins, so the last one joins with none left on its way', async () => {
    const counted = countedWork();
    const outcomes = await ensurePaths(
      counted.work,
      registeredMp(),
      [{ target: '192.0.2.61' }, { target: '192.0.2.62' }],
      {
        waitS: 20,
      },
    );
    expect(outcomes.map((o) => [o.created, o.measuring])).toEqual([
      [true, true],
      [true, true],
    ]);
    expect(counted.announced).toBe(2);
    // Each wait joined after its own path was let go: the one joining last saw none on its way.
    expect(counted.onTheirWayAtJoin).toHaveLength(2);
    expect(Math.min(...counted.onTheirWayAtJoin)).toBe(0);
    expect(counted.onTheirWayAtJoin.every((n) => n <= 1)).toBe(true);
    expect(counted.onTheirWay()).toBe(0);
  });

  it('a path that ends without a wait is let go too: no organization, a malformed answer', async () => {
    const counted = countedWork();
    // No orgId, the token sees more than one organization: the path cannot be created.
    const bare: Appliance = { id: 999_101, name: 'arrivals-nowhere', connectionStatus: 'AVAILABLE' };
    const [noOrg] = await ensurePaths(counted.work, bare, [{ target: '192.0.2.63' }], { waitS: 5 });
    expect(noOrg?.sentence).toMatch(/the service did not say the MP's organization/);
    service.setFaults({ rawBody: { text: '{"paths": "not a list', count: 1 } });
    const [malformed] = await ensurePaths(counted.work, registeredMp(), [{ target: '192.0.2.64' }], { waitS: 5 });
    expect(malformed).toMatchObject({ created: false, measuring: false });
    expect(counted.announced).toBe(2);
    expect(counted.onTheirWayAtJoin).toEqual([]);
    expect(counted.onTheirWay()).toBe(0);
  });

  it("a service too slow to say the MP's organization within the wait: every path is let go", async () => {
    const counted = countedWork();
    // A vendor-true record without orgId: the organization is asked, and the answer comes too late.
    const bare: Appliance = { id: 999_102, name: 'arrivals-slow', connectionStatus: 'AVAILABLE' };
    service.setFaults({ latencyMs: 3_000 });
    try {
      const outcomes = await ensurePaths(counted.work, bare, [{ target: '192.0.2.68' }, { target: '192.0.2.69' }], {
        waitS: 1,
      });
      expect(outcomes.map((o) => o.sentence)).toEqual([
        'path to 192.0.2.68 could not be made sure of: the wait of 1 s ran out before the service answered',
        'path to 192.0.2.69 could not be made sure of: the wait of 1 s ran out before the service answered',
      ]);
    } finally {
      service.setFaults({});
    }
    expect(counted.announced).toBe(2);
    expect(counted.onTheirWay()).toBe(0);
  });

  it("the caller's abort lets every path go", async () => {
    const counted = countedWork();
    const stop = new AbortController();
    const running = ensurePaths(
      counted.work,
      registeredMp(),
      [{ target: '192.0.2.65' }, { target: '192.0.2.66' }, { target: '192.0.2.67' }],
      // Data only after the abort: every path waits in the rounds, or is still being created, when it comes.
      { waitS: 20, since: Date.now() + 60_000, signal: stop.signal },
    );
    setTimeout(() => stop.abort(new Error('stopped by the test')), 300);
    await expect(running).rejects.toThrow('stopped by the test');
    expect(counted.announced).toBe(3);
    expect(counted.onTheirWay()).toBe(0);
  });
});
