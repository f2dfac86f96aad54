import { createHook } from 'node:async_hooks';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { restartAndWait } from '../../src/apply/restart-and-wait.js';
import type { DeviceInterface } from '../../src/client/index.js';
import { DeviceNotAnsweringError } from '../../src/client/index.js';
import { knockIntervalMs, ProbeCadence } from '../../src/client/retry-policy.js';
import { refusedConnect } from '../../src/http/index.js';
import { useSimulator } from '../support/simulator-fixture.js';
import { failureOf } from '../support/failures.js';
import { clientFor, PASSWORD } from './client-fixtures.js';

/**
 * How the client notices a restarted device: single-attempt probes at a steady cadence through
 * the outage, the first answer with the new configuration ending the wait. The cadence is
 * checked by its shape (gaps between probes, probes per outage, no retry inside a probe), not by
 * tight wall-clock bounds: this runs on a loaded two-core machine. Speed itself is bench's.
 */

/** Outage ends as the simulator reports them (its answeringAgain hook), in performance.now() time. */
const backAt: number[] = [];
const downAt: number[] = [];
const device = useSimulator(
  () => ({
    password: PASSWORD,
    restartMs: 1_500,
    hooks: {
      restartStarted: () => void downAt.push(performance.now()),
      answeringAgain: () => void backAt.push(performance.now()),
    },
  }),
  { scope: 'test' },
);
const { sim } = device;

const ETH1 = {
  name: 'eth1',
  family: 'inet',
  method: 'static',
  address: '192.0.2.10',
  netmask: '255.255.255.0',
  gateway: '192.0.2.1',
} as const;
const hasEth1 = (view: DeviceInterface[]) => view.some((i) => i.name === 'eth1');
/** The probes the device answered: GETs of the active view. */
const answeredProbes = () =>
  sim
    .requests()
    .filter((r) => r.method === 'GET' && r.path === '/api/v1/interface/' && r.query['config_state'] === 'active');

afterEach(() => {
  backAt.length = 0;
  downAt.length = 0;
});

function gaps(times: readonly number[]): number[] {
  return times.slice(1).map((t, i) => t - (times[i] as number));
}

describe('probing a restarting device', () => {
  it('probes through the outage, one attempt each, and stops at the first answer with the new configuration', async () => {
    const { api, seen } = clientFor(sim.url, { kind: 'fingerprint', sha256: sim.fingerprintSha256 });
    try {
      await api.postStanza(ETH1);
      await api.restartNetworking();
      sim.clearRequests();
      const failedAt: number[] = [];
      await api.waitUntilAnswering({
        timeoutMs: 20_000,
        until: hasEth1,
        onAttempt: () => void failedAt.push(performance.now()),
      });
      const doneAt = performance.now();

      expect(downAt).toHaveLength(1);
      expect(backAt).toHaveLength(1);
      // A 1.5 s outage at one probe per 50 ms: several refused probes, none more than 1 s apart.
      expect(failedAt.length).toBeGreaterThanOrEqual(3);
      for (const gap of gaps([downAt[0] as number, ...failedAt, doneAt])) expect(gap).toBeLessThan(1_000);
      // The answer came from the first probe after the device was back, within one gap of it.
      expect(doneAt - (backAt[0] as number)).toBeLessThan(1_000);
      expect(answeredProbes()).toHaveLength(1);
      // No probe was retried inside: the client's retry hook never fired.
      expect(seen.retries).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it('knocks every ~5 ms while the port refuses (a bare TCP connect, no request): the return is seen within a few ms', async () => {
    const { api, seen } = clientFor(sim.url, { kind: 'fingerprint', sha256: sim.fingerprintSha256 });
    try {
      await api.postStanza(ETH1);
      await api.restartNetworking();
      sim.clearRequests();
      const refusedAt: number[] = [];
      await api.waitUntilAnswering({
        timeoutMs: 20_000,
        until: hasEth1,
        onAttempt: (_ms, reason) => {
          if (reason === 'connection refused') refusedAt.push(performance.now());
        },
      });
      // Well inside the outage: a knock's refusal every ~5 ms (timers run late on a loaded
      // machine, so the median, and room to 30 ms; the full probes' cadence is 50).
      const inside = refusedAt.filter((t) => t > (downAt[0] as number) + 100 && t < (backAt[0] as number) - 100);
      expect(inside.length).toBeGreaterThan(10);
      const sorted = gaps(inside).sort((a, b) => a - b);
      expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(30);
      // The knocks sent nothing: the device saw one request, the probe that ended the wait.
      expect(answeredProbes()).toHaveLength(1);
      expect(sim.requests()).toHaveLength(1);
      expect(seen.retries).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it('answers that do not satisfy `until` keep the probes going at the same cadence', async () => {
    // A device that still answers with the old configuration (it has not gone down yet).
    const { api, seen } = clientFor(sim.url, { kind: 'fingerprint', sha256: sim.fingerprintSha256 });
    try {
      sim.clearRequests();
      const error = await failureOf(api.waitUntilAnswering({ timeoutMs: 1_200, until: hasEth1 }));
      expect(error).toBeInstanceOf(DeviceNotAnsweringError);
      expect(error.message).toBe(
        `the device at ${sim.url} did not answer within 1.2 s (last attempt: it answered, but not yet with the new configuration)`,
      );
      expect(answeredProbes().length).toBeGreaterThanOrEqual(3);
      expect(seen.retries).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it('restartAndWait: done at the first answer after the outage, refused probes reported at most once a second', async () => {
    const { api, seen } = clientFor(sim.url, { kind: 'fingerprint', sha256: sim.fingerprintSha256 });
    try {
      await api.postStanza(ETH1);
      sim.clearRequests();
      const waits: [string, number][] = [];
      await restartAndWait(api, 20_000, (reason, ms) => waits.push([reason, ms]), undefined, hasEth1);
      const doneAt = performance.now();
      expect(backAt).toHaveLength(1);
      expect(doneAt - (backAt[0] as number)).toBeLessThan(1_000);
      // The view before the restart, the restart, then exactly one answered probe: the first one after the outage.
      expect(sim.requests().map((r) => `${r.method} ${r.path}`)).toEqual([
        'GET /api/v1/interface/',
        'PUT /api/v1/service/networking/',
        'GET /api/v1/interface/',
      ]);
      // A 1.5 s outage probed every 50 ms: the refusals reach the progress display at most once a second.
      expect(waits.length).toBeGreaterThan(0);
      expect(waits.length).toBeLessThanOrEqual(3);
      for (const [reason] of waits) expect(reason).toBe('connection refused');
      expect(seen.retries).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it('backs off to one probe a second only after half the wait', async () => {
    await device.start({ password: PASSWORD, faults: ['no-return'] });
    const { api } = clientFor(sim.url, { kind: 'fingerprint', sha256: sim.fingerprintSha256 });
    try {
      await api.restartNetworking();
      const started = performance.now();
      const failedAt: number[] = [];
      const error = await failureOf(
        api.waitUntilAnswering({ timeoutMs: 5_000, onAttempt: () => void failedAt.push(performance.now() - started) }),
      );
      expect(error).toBeInstanceOf(DeviceNotAnsweringError);
      // Half the wait is 2.5 s; the probes around it (either cadence, depending on when each
      // started and failed) are left out of both sides.
      const early = failedAt.filter((t) => t < 2_300);
      const late = failedAt.filter((t) => t >= 2_700);
      // Up to half the wait: steady, no doubling pauses. After it: one a second (timers run late,
      // never early; 800 ms leaves room for one refusal taking longer than the next).
      expect(early.length).toBeGreaterThanOrEqual(4);
      for (const gap of gaps(early)) expect(gap).toBeLessThan(1_000);
      expect(late.length).toBeGreaterThanOrEqual(2);
      for (const gap of gaps(late)) expect(gap).toBeGreaterThanOrEqual(ProbeCadence.lateIntervalMs - 200);
      expect(late.length).toBeLessThan(early.length);
    } finally {
      await api.close();
    }
  });
});

describe('a half-open device', () => {
  let server: Server | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets) s.destroy();
    sockets.length = 0;
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it('a probe that hangs does not hold the next ones back', async () => {
    // Accepts TCP and never speaks TLS: every probe hangs until its own deadline (1 s).
    const accepted: number[] = [];
    server = createServer((socket) => {
      accepted.push(performance.now());
      sockets.push(socket);
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const { api, seen } = clientFor(
      `https://127.0.0.1:${port}`,
      { kind: 'insecure' },
      { connectTimeoutMs: 10_000, requestTimeoutMs: 30_000 },
    );
    try {
      const reasons: string[] = [];
      // Timers made while it waits: with every slot taken by a hanging probe the wait sleeps until
      // one settles, where a zero pause made one every millisecond (about 2 000 in 2 s).
      let timers = 0;
      const timerCount = createHook({ init: (_id, type) => void (type === 'Timeout' && (timers += 1)) }).enable();
      const error = await failureOf(
        api.waitUntilAnswering({ timeoutMs: 2_000, onAttempt: (_ms, reason) => reasons.push(reason) }),
      ).finally(() => timerCount.disable());
      expect(timers).toBeLessThan(300);
      expect(error).toBeInstanceOf(DeviceNotAnsweringError);
      // One probe at a time, each waiting out its 1 s deadline, would make at most 2 connections
      // in 2 s; overlapping probes on their own sockets keep starting every 50 ms.
      expect(accepted.length).toBeGreaterThanOrEqual(4);
      expect(reasons.length).toBeGreaterThan(0);
      for (const reason of reasons) expect(reason).toMatch(/^no (connection|answer) within /);
      expect(seen.retries).toEqual([]);
    } finally {
      await api.close();
    }
  });
});

describe('knocking', () => {
  it('tells a refused port from one that listens, and says nothing else', async () => {
    const connections: Socket[] = [];
    const server = createServer((socket) => connections.push(socket.on('error', () => undefined)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      // Listening: accepted, closed again, no byte sent.
      expect(await refusedConnect('127.0.0.1', port, 1_000)).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(connections).toHaveLength(1);
      expect(connections[0]!.bytesRead).toBe(0);
      // Stopped before it began: no connect at all.
      const stopped = new AbortController();
      stopped.abort();
      expect(await refusedConnect('127.0.0.1', port, 1_000, stopped.signal)).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(connections).toHaveLength(1);
    } finally {
      for (const socket of connections) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
    // Closed now: the refusal itself.
    const refusal = await refusedConnect('127.0.0.1', port, 1_000);
    expect(refusal?.code).toBe('ECONNREFUSED');
  });

  it("a refusal it tells is the full probe's own: nothing was sent, and the failure says so", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const failures = new Set<string>();
    for (const host of ['127.0.0.1', 'localhost']) {
      // localhost: a name, no knock; the full probe meets the refusal itself.
      const url = `https://${host}:${port}`;
      const { api } = clientFor(url, { kind: 'insecure' });
      try {
        await failureOf(
          api.waitUntilAnswering({
            timeoutMs: 300,
            onAttempt: (_ms, reason, failure) => void failures.add(`${reason}: ${failure.message.replace(url, 'URL')}`),
          }),
        );
      } finally {
        await api.close();
      }
    }
    expect([...failures]).toEqual(['connection refused: cannot reach URL: connection refused']);
  });

  it('shares one budget among the waits of a process, and stops with the late cadence', () => {
    expect(knockIntervalMs(0, 10_000, 1)).toBe(ProbeCadence.knockIntervalMs);
    expect(ProbeCadence.knockIntervalMs).toBe(5);
    expect(knockIntervalMs(0, 10_000, 2)).toBe(5);
    expect(knockIntervalMs(0, 10_000, 4)).toBe(10);
    expect(knockIntervalMs(0, 10_000, 8)).toBe(20);
    // 32 devices restarting at once knock no more often than they probed before.
    expect(knockIntervalMs(0, 10_000, 32)).toBe(ProbeCadence.intervalMs);
    expect(knockIntervalMs(4_999, 10_000, 1)).toBe(5);
    expect(knockIntervalMs(5_000, 10_000, 1)).toBeUndefined();
  });
});

describe('many waits sharing one stop signal (the agent stops every job and device through one)', () => {
  it('stop together, at once, and add no listener of their own to it', async () => {
    // A port that refuses: every wait knocks along, its pauses short.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));

    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on('warning', onWarning);
    const stop = new AbortController();
    const clients = Array.from({ length: 12 }, () => clientFor(`https://127.0.0.1:${port}`, { kind: 'insecure' }).api);
    try {
      const waits = clients.map((api) => failureOf(api.waitUntilAnswering({ timeoutMs: 30_000, signal: stop.signal })));
      await new Promise((resolve) => setTimeout(resolve, 300));
      stop.abort(new Error('stopped by SIGTERM'));
      for (const error of await Promise.all(waits)) expect(error.message).toBe('stopped by SIGTERM');
      // Emitted on the next tick of the listener that crossed the default limit (10).
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => w.name)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await Promise.all(clients.map((api) => api.close()));
    }
  });
});
