import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { DATA_API_RATE_LIMIT, RateLimiter, waitUntilConnected, type DataApi } from '../../src/service/index.js';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { busiestWindow, clientOf, startService } from './service-fixtures.js';

/** The client keeps the service's limit itself, for a whole fleet, and honours a 429's Retry-After. */

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function service(options: Parameters<typeof startService>[0]): Promise<ServiceSimulator> {
  const started = await startService(options);
  cleanup.push(() => started.close());
  return started;
}

function client(...args: Parameters<typeof clientOf>): DataApi {
  const { api } = clientOf(...args);
  cleanup.push(() => api.close());
  return api;
}

describe('the limiter', () => {
  it('gives a token back one window after its request ended, first come first served', async () => {
    const limiter = new RateLimiter({ requests: 2, windowMs: 300, marginMs: 0 });
    const started = Date.now();
    const order: number[] = [];
    const turns = await Promise.all(
      [0, 1].map(async (n) => {
        const turn = await limiter.acquire();
        order.push(n);
        return turn;
      }),
    );
    const later = [2, 3].map(async (n) => {
      await limiter.acquire();
      order.push(n);
      return Date.now() - started;
    });
    await sleep(200);
    expect(order).toEqual([0, 1]);
    expect(limiter.waiting).toBe(2);
    // The requests end now: their tokens come back 300 ms from here, not from when they were taken.
    const endedAt = Date.now() - started;
    for (const turn of turns) turn.release();
    const times = await Promise.all(later);
    expect(order).toEqual([0, 1, 2, 3]);
    expect(times).toHaveLength(2);
    for (const at of times) expect(at).toBeGreaterThanOrEqual(endedAt + 295);
  });

  it('an aborted wait leaves the queue', async () => {
    const limiter = new RateLimiter({ requests: 1, windowMs: 10_000 });
    await limiter.acquire();
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    expect(limiter.waiting).toBe(1);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    expect(limiter.waiting).toBe(0);
  });

  it('is the documented limit by default', () => {
    expect(DATA_API_RATE_LIMIT).toEqual({ requests: 50, windowMs: 10_000, highReserve: 5 });
    expect(new RateLimiter().limit).toMatchObject({ requests: 50, windowMs: 10_000 });
  });

  it('keeps its reserve for high turns: a round is not held up by writes that took every other token', async () => {
    const limiter = new RateLimiter({ requests: 3, windowMs: 10_000, highReserve: 1 });
    const granted: string[] = [];
    const take = (name: string, priority: 'high' | 'normal', signal?: AbortSignal) =>
      limiter.acquire(signal, priority).then(
        (turn) => {
          granted.push(name);
          turn.release();
        },
        () => granted.push(`${name} gave up`),
      );
    const controller = new AbortController();
    await Promise.all([take('write 1', 'normal'), take('write 2', 'normal')]);
    const third = take('write 3', 'normal', controller.signal);
    await take('round', 'high');
    controller.abort();
    await third;
    expect(granted).toEqual(['write 1', 'write 2', 'round', 'write 3 gave up']);
  });
});

describe('429 and Retry-After', () => {
  it('waits the Retry-After the service asks for, for every request sharing the token, then goes on', async () => {
    const limited = await service({ rateLimit: { requests: 2, windowMs: 2_000 } });
    // A client whose own limit is looser than the service's: the service's 429 must be honoured.
    const retries: { delayMs: number }[] = [];
    const api = clientOf(limited, {
      rateLimit: { requests: 100, windowMs: 10_000 },
      onRetry: (info) => retries.push(info),
    }).api;
    cleanup.push(() => api.close());
    const answers = await Promise.all([0, 1, 2].map(() => api.listOrganizations()));
    expect(answers).toHaveLength(3);
    const log = limited.requests();
    const refused = log.filter((e) => e.status === 429);
    expect(refused).toHaveLength(1);
    const [first] = refused;
    const retryAfterMs = (first?.retryAfterS ?? 0) * 1000;
    expect(retryAfterMs).toBeGreaterThanOrEqual(1000);
    expect(retries).toEqual([expect.objectContaining({ delayMs: retryAfterMs })]);
    // Nothing reached the service between the 429 and the end of its Retry-After.
    const after = log.filter((e) => e.seq > (first?.seq ?? Infinity));
    expect(after).toHaveLength(1);
    expect(after[0]?.status).toBe(200);
    expect((after[0]?.atMs ?? 0) - (first?.atMs ?? 0)).toBeGreaterThanOrEqual(retryAfterMs - 5);
  });
});

describe('a fleet of 200 MPs', () => {
  it('polled at once through one client stays within 50 requests per 10 s, counted by the service', async () => {
    const fleet = await service({ reconnectMs: 0 });
    const hostnames = Array.from({ length: 200 }, (_, n) => `fleet-mp${n + 1}`);
    for (const hostname of hostnames) {
      fleet.registerAppliance({ hostname, orgId: 12 });
      fleet.restartStarted(hostname);
    }
    // The model's limit, unchanged. The first 50 polls go out at once and say UNAVAILABLE; then
    // (on that event, not after a time) the fleet answers again, so the next 50 MPs in the queue
    // find it AVAILABLE one window after the first polls ended. The wait must hold that second
    // window however slowly a loaded machine ends the first polls (50 TLS handshakes at once):
    // 19 s leaves them almost 9 s. A third window cannot start before 2 x (10 s + margin) = 20.5 s
    // however fast the machine is, so the rest of the fleet stays unchecked.
    const api = client(fleet, { requestTimeoutMs: 10_000 });
    let answered = 0;
    const onProgress = () => {
      answered += 1;
      if (answered === 50) for (const hostname of hostnames) fleet.answeringAgain(hostname);
    };
    const outcomes = await Promise.all(
      hostnames.map((hostname) => waitUntilConnected(api, hostname, { waitS: 19, onProgress })),
    );
    expect(answered).toBeGreaterThanOrEqual(50);
    const log = fleet.requests();
    expect(log.length).toBeGreaterThanOrEqual(100);
    expect(log.filter((e) => e.status !== 200)).toEqual([]);
    expect(
      busiestWindow(
        log.map((e) => e.atMs),
        10_000,
      ),
    ).toBeLessThanOrEqual(50);
    const kinds = new Map<string, number>();
    for (const outcome of outcomes) kinds.set(outcome.kind, (kinds.get(outcome.kind) ?? 0) + 1);
    expect([...kinds.keys()].sort()).toEqual(['connected', 'unavailable', 'unchecked']);
    expect((kinds.get('connected') ?? 0) + (kinds.get('unavailable') ?? 0)).toBe(log.length);
  }, 40_000);
});
