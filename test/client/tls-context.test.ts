import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '../../src/core/undici.js';
import { connectorsFor } from '../../src/http/index.js';
import { deviceCertificates } from '../support/device-certificates.js';
import { json, startTestServer, type TestServer } from './test-server.js';

/*
 * Counted, not replaced: the real createSecureContext makes every context, and the real
 * handshakes below verify against it. No real part can say how often a context was built.
 */
vi.mock('node:tls', async (importOriginal) => {
  const real = await importOriginal<typeof tls>();
  return { ...real, createSecureContext: vi.fn(real.createSecureContext) };
});

/**
 * A device's connections (the keep-alive one and every restart probe's) share one TLS context,
 * and each of them still verifies the device's certificate against it.
 */
let trusted: TestServer;
let otherCa: TestServer;
const pki = deviceCertificates('127.0.0.1');

beforeAll(async () => {
  const ok: Parameters<typeof startTestServer>[0] = (_req, _body, res) => json(res, 200, { success: true });
  trusted = await startTestServer(ok, { cert: { certPem: pki.serverCertPem, keyPem: pki.serverKeyPem } });
  const other = deviceCertificates('127.0.0.1');
  otherCa = await startTestServer(ok, { cert: { certPem: other.serverCertPem, keyPem: other.serverKeyPem } });
});
afterAll(async () => {
  await trusted.close();
  await otherCa.close();
});

/** One request on a Client of its own: a connection of its own. */
async function status(url: string, connect: ReturnType<ReturnType<typeof connectorsFor>>): Promise<number> {
  const client = new Client(url, { connect });
  try {
    return (await client.request({ method: 'GET', path: '/' })).statusCode;
  } finally {
    await client.destroy();
  }
}

describe('the TLS context of a device', () => {
  it('is built once for all its connections, whatever their deadline, at the first connect', async () => {
    const made = vi.mocked(tls.createSecureContext);
    made.mockClear();
    const connector = connectorsFor({ kind: 'ca', caPem: pki.caPem });
    const connectors = [connector(10_000), connector(500), connector(500)];
    expect(made).not.toHaveBeenCalled();
    const before = trusted.connections;
    for (const connect of connectors) expect(await status(trusted.url, connect)).toBe(200);
    expect(trusted.connections - before).toBe(3);
    expect(made).toHaveBeenCalledTimes(1);
    expect(made).toHaveBeenCalledWith({ ca: pki.caPem });
  });

  it('still verifies every connection: a device certificate from another CA is refused each time', async () => {
    const connector = connectorsFor({ kind: 'ca', caPem: pki.caPem });
    for (const connect of [connector(10_000), connector(500)]) {
      await expect(status(otherCa.url, connect)).rejects.toMatchObject({ code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    }
    expect(otherCa.requests).toHaveLength(0);
  });
});
