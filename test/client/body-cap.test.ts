import { afterEach, describe, expect, it } from 'vitest';
import { failureOf } from '../support/failures.js';
import { clientFor } from './client-fixtures.js';
import { startTestServer, type TestServer } from './test-server.js';

/**
 * A device (or any host a stick names) that streams an endless answer body: the client reads at
 * most 4 MiB of it, fails naming the device, and the process stays alive and small.
 */

const CHUNK = Buffer.alloc(1024 * 1024, 0x61);
/** Far past the cap, so a client without one would read it all and fail differently (or run out of memory). */
const SERVER_LIMIT_BYTES = 512 * 1024 * 1024;

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function endlessServer(declareLength: boolean): Promise<{ server: TestServer; written: () => number }> {
  let written = 0;
  server = await startTestServer((_req, _body, res) => {
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(declareLength ? { 'content-length': String(SERVER_LIMIT_BYTES) } : {}),
    });
    const pump = (): void => {
      while (written < SERVER_LIMIT_BYTES && !res.destroyed) {
        written += CHUNK.length;
        if (!res.write(CHUNK)) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    res.on('close', () => res.removeAllListeners('drain'));
    pump();
  });
  return { server, written: () => written };
}

describe('device answer bodies are capped while streaming', () => {
  it('an endless chunked body ends in an error naming the device after 4 MiB', async () => {
    const { server, written } = await endlessServer(false);
    const { api } = clientFor(
      server.url,
      { kind: 'fingerprint', sha256: server.fingerprintSha256 },
      { requestTimeoutMs: 60_000 },
    );
    const rssBefore = process.memoryUsage().rss;
    const error = await failureOf(api.listInterfaces('active'));
    await api.close();
    expect(error.code).toBe('MPPROV_DEVICE_RESPONSE');
    expect(error.message).toBe(
      `the device at ${server.url} answered GET /interface/?config_state=active with a body longer than 4194304 bytes (4 MiB), which was not read further`,
    );
    expect(written()).toBeGreaterThan(4 * 1024 * 1024);
    expect(written()).toBeLessThan(SERVER_LIMIT_BYTES);
    // Small: what was read is bounded by the cap (plus socket buffers), not by what was sent.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(128 * 1024 * 1024);
    // One attempt: a device that sent this once would send it again.
    expect(server.requests).toHaveLength(1);
  });

  it('a declared length past the cap is refused before reading', async () => {
    const { server } = await endlessServer(true);
    const { api } = clientFor(server.url, { kind: 'fingerprint', sha256: server.fingerprintSha256 });
    const error = await failureOf(api.getCapability());
    await api.close();
    expect(error.code).toBe('MPPROV_DEVICE_RESPONSE');
    expect(error.message).toContain(`the device at ${server.url} answered GET`);
    expect(error.message).toContain('with a body longer than 4194304 bytes');
  });
});
