import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:https';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '../../src/core/undici.js';
import { DeviceNotAnsweringError } from '../../src/client/index.js';
import type { DeviceConnection } from '../../src/client/device-request.js';
import { waitUntilAnswering } from '../../src/client/wait-until-answering.js';
import { Secret } from '../../src/core/secret.js';
import { connectorsFor, refusedConnect } from '../../src/http/index.js';
import { createSelfSignedCertificate } from '../../src/simulator/index.js';
import { failureOf } from '../support/failures.js';
import { clientFor, PASSWORD } from './client-fixtures.js';

/**
 * The restart wait's two limits that a knock (a bare TCP connect before each probe) must not
 * bend: a 429's Retry-After, and the wait's own timeout.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The wait's connection as the client builds it (insecure trust, a socket per probe), but each
 * knock's answer `delayMs` after the port gave it.
 */
function slowKnockConnection(port: number, delayMs: number): DeviceConnection {
  const connector = connectorsFor({ kind: 'insecure' });
  const url = `https://127.0.0.1:${port}`;
  const dispatcher = new Client(url, { connect: connector(2_000), pipelining: 1 });
  cleanups.push(() => dispatcher.destroy());
  return {
    url,
    dispatcher,
    username: 'admin',
    password: new Secret(PASSWORD),
    connectTimeoutMs: 2_000,
    requestTimeoutMs: 5_000,
    openProbe: (timeoutMs) => new Client(url, { connect: connector(timeoutMs), pipelining: 1 }),
    knock: async (deadlineMs, signal) => {
      const refusal = await refusedConnect('127.0.0.1', port, deadlineMs, signal);
      await sleep(delayMs);
      return refusal;
    },
  };
}

/** An HTTPS server on loopback answering with `handler`; closed after the test. */
async function httpsServer(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; port: number }> {
  const { certificatePem, privateKeyPem } = createSelfSignedCertificate();
  const server: Server = createServer({ cert: certificatePem, key: privateKeyPem }, handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => void server.close());
  return { server, port: (server.address() as { port: number }).port };
}

describe('a 429 during a restart wait', () => {
  it('holds every probe and knock until its Retry-After, even when a knock started before it is refused after it', async () => {
    const { certificatePem, privateKeyPem } = createSelfSignedCertificate();
    const askedAt: number[] = [];
    let limitedAt = 0;
    let port = 0;
    const server: Server = createServer({ cert: certificatePem, key: privateKeyPem }, (_req, res) => {
      askedAt.push(performance.now());
      if (askedAt.length > 1) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true,"interfaces":[]}');
        return;
      }
      // The first probe: the port closes while its answer is on the way (the knocks of the probes
      // after it are refused), then a 429 asking for a second; the port listens again soon after.
      server.close();
      setTimeout(() => {
        limitedAt = performance.now();
        res
          .writeHead(429, { 'retry-after': '1', 'content-type': 'application/json', connection: 'close' })
          .end('{"success":false,"error":"too many requests"}');
        // Well after the 429, so a loaded machine still reads it first: a probe sent before it is no fault.
        setTimeout(() => server.listen(port, '127.0.0.1'), 400);
      }, 120);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as { port: number }).port;
    cleanups.push(() => void server.close());
    // Each knock's answer 30 ms after the port gave it, as over a slow path: on loopback a refusal
    // is back within microseconds, so the knock started just before the 429 and refused just after
    // it, which such a path makes likely, would not happen here.
    const connection = slowKnockConnection(port, 30);
    const reasons: string[] = [];
    await waitUntilAnswering(connection, {
      timeoutMs: 10_000,
      until: () => true,
      onAttempt: (_ms, r) => reasons.push(r),
    });
    // The knocks did meet the closed port, and a probe the 429 ...
    expect(reasons).toContain('connection refused');
    expect(reasons.some((r) => r.startsWith('HTTP 429'))).toBe(true);
    // ... and the next request still came only after the second the device asked for.
    expect(askedAt).toHaveLength(2);
    expect(askedAt[1]! - limitedAt).toBeGreaterThanOrEqual(1_000);
  });

  it('holds a probe whose knock was still out when the 429 came: it asks nothing', async () => {
    const askedAt: number[] = [];
    let limitedAt = 0;
    const { port } = await httpsServer((_req, res) => {
      askedAt.push(performance.now());
      if (askedAt.length > 1) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true,"interfaces":[]}');
        return;
      }
      limitedAt = performance.now();
      res
        .writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' })
        .end('{"success":false,"error":"too many requests"}');
    });
    // Knocks answered 150 ms late: the probes started 50 and 100 ms after the first are still
    // knocking when its 429 comes back, and their knocks end inside its Retry-After.
    await waitUntilAnswering(slowKnockConnection(port, 150), { timeoutMs: 10_000, until: () => true });
    expect(askedAt).toHaveLength(2);
    expect(askedAt[1]! - limitedAt).toBeGreaterThanOrEqual(1_000);
  });
});

/**
 * A listening port whose accept queue is full: Linux drops further SYNs without a word, as a
 * firewall that drops does. A child process that listens with a backlog of one and never
 * accepts, its queue filled by one connection of ours.
 */
async function silentPort(): Promise<number> {
  const child: ChildProcess = spawn(
    'python3',
    [
      '-c',
      'import socket,sys,time\ns=socket.socket()\ns.bind(("127.0.0.1",0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(120)',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  cleanups.push(() => void child.kill('SIGKILL'));
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const port = Number(line.toString().trim());
  // Fill the queue: connections until one hangs unanswered.
  for (let i = 0; i < 8; i++) {
    const socket: Socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    cleanups.push(() => void socket.destroy());
    const answered = await Promise.race([
      once(socket, 'connect').then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 300)),
    ]);
    if (!answered) return port;
  }
  throw new Error('the accept queue never filled: no silent port to test against');
}

describe('a device that drops the knock silently', () => {
  it('still ends the wait at its timeout: the request after a knock gets only what the knock left', async () => {
    const port = await silentPort();
    const { api } = clientFor(`https://127.0.0.1:${port}`, { kind: 'insecure' }, { connectTimeoutMs: 10_000 });
    cleanups.push(() => api.close());
    const started = performance.now();
    const error = await failureOf(api.waitUntilAnswering({ timeoutMs: 1_000 }));
    const waited = performance.now() - started;
    expect(error).toBeInstanceOf(DeviceNotAnsweringError);
    // Each knock waits up to 100 ms for an answer that never comes, then the full request: when
    // the request kept the probe's whole time, the wait ended about 100 ms late; when undici's
    // connect timer (half-second ticks) ended the request instead of its deadline, up to 500.
    expect(waited).toBeGreaterThanOrEqual(1_000);
    expect(waited).toBeLessThan(1_100);
  });
});
