import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { AdminApi } from '../../src/client/index.js';
import { clientFor } from '../client/client-fixtures.js';
import { json, startTestServer, type TestServer } from '../client/test-server.js';
import { failureOf } from '../support/failures.js';

/**
 * A device that accepts the TCP connection and then holds the TLS handshake (a device half up, or
 * one stalling on purpose): a request's deadline, or the caller's stop, gives the request up
 * while undici still waits for that connect (src/http/send-request.ts). What was given up must
 * never reach the device once the handshake completes, and the client must serve the next request.
 */

interface HeldProxy {
  url: string;
  /** Lets every connection held so far (and later ones) through to the device. */
  release(): void;
  /** Resolves when the first client connection has closed. */
  firstClosed: Promise<void>;
  close(): Promise<void>;
}

/** A TCP proxy to `port` that holds each connection, unanswered, until release(). */
async function heldProxy(port: number): Promise<HeldProxy> {
  let released = false;
  const waiting: (() => void)[] = [];
  const sockets = new Set<Socket>();
  let firstClosed!: () => void;
  const first = new Promise<void>((resolve) => (firstClosed = resolve));
  const server: Server = createServer((client) => {
    if (sockets.size === 0) client.once('close', () => firstClosed());
    sockets.add(client);
    client.on('error', () => undefined);
    client.pause();
    const through = (): void => {
      if (client.destroyed) return;
      const device = createConnection(port, '127.0.0.1');
      sockets.add(device);
      device.on('error', () => client.destroy());
      client.on('close', () => device.destroy());
      device.on('close', () => client.destroy());
      client.pipe(device).pipe(client);
      client.resume();
    };
    if (released) through();
    else waiting.push(through);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `https://127.0.0.1:${address.port}`,
    release: () => {
      released = true;
      for (const through of waiting.splice(0)) through();
    },
    firstClosed: first,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let device: TestServer | undefined;
let proxy: HeldProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await device?.close();
  proxy = undefined;
  device = undefined;
});

/**
 * A device answering every GET, behind a proxy that holds each TLS handshake until released, and
 * a client of it whose requests give up after 300 ms (their connect would wait a minute).
 */
async function heldDevice(): Promise<{ api: AdminApi; held: HeldProxy; server: TestServer }> {
  const server = await startTestServer((_req, _body, res) => json(res, 200, { success: true, interfaces: [] }));
  const held = await heldProxy(server.port);
  // Closed after each test.
  device = server;
  proxy = held;
  const { api } = clientFor(
    held.url,
    { kind: 'fingerprint', sha256: server.fingerprintSha256 },
    { connectTimeoutMs: 60_000, requestTimeoutMs: 300 },
  );
  return { api, held, server };
}

describe('a request given up while its connection is still being made', () => {
  it('never reaches the device later, and the client serves the next request', async () => {
    const { api, held, server } = await heldDevice();
    try {
      // A write is never retried after a timeout: it fails on its deadline, the connect still held.
      const failure = await failureOf(api.restartNetworking());
      expect(failure.code).toBe('MPPROV_DEVICE_TIMEOUT');
      held.release();
      await api.listInterfaces('active');
      // The GET came after the handshake the restart's request waited for had completed (undici
      // ends that connection when it finds its request given up, and the GET makes another): had
      // the restart been sent then, the device would have seen it first.
      expect(server.requests.map((r) => r.method)).toEqual(['GET']);
    } finally {
      await api.close();
    }
  });

  it("does not hold the client's close until the handshake it waited for ends", { timeout: 15_000 }, async () => {
    const { api, held, server } = await heldDevice();
    expect((await failureOf(api.restartNetworking())).code).toBe('MPPROV_DEVICE_TIMEOUT');
    // The run is done with the device (its lock and concurrency slot wait on this): the close
    // must not wait for the held connect (undici ends that on its own timeout, or as here when the
    // handshake completes, and sends nothing on it).
    await api.close();
    held.release();
    await held.firstClosed;
    expect(server.requests).toEqual([]);
  });

  it("is cut by the caller's stop at once, and nothing reaches the device after it", async () => {
    device = await startTestServer((_req, _body, res) => json(res, 200, { success: true, interfaces: [] }));
    proxy = await heldProxy(device.port);
    const stop = new AbortController();
    const { api } = clientFor(
      proxy.url,
      { kind: 'fingerprint', sha256: device.fingerprintSha256 },
      { connectTimeoutMs: 60_000, requestTimeoutMs: 60_000, signal: stop.signal },
    );
    const restarting = failureOf(api.restartNetworking());
    // The connection is being made (the proxy holds it) when the stop comes.
    await new Promise((resolve) => setImmediate(resolve));
    stop.abort(new Error('stopped by SIGTERM'));
    expect((await restarting).message).toBe('stopped by SIGTERM');
    proxy.release();
    await proxy.firstClosed;
    expect(device.requests).toEqual([]);
    await api.close().catch(() => undefined);
  });
});
