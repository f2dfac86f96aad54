import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/core/secret.js';
import type { AdminApi } from '../../src/client/index.js';
import { createSelfSignedCertificate } from '../../src/simulator/index.js';
import { closedPort, failureOf, textsOf, useCloseAfterAll } from '../support/failures.js';
import { clientFor, expectNoSecret, PASSWORD, type Recorded } from './client-fixtures.js';
import { deviceCertificates } from '../support/device-certificates.js';
import { json, startTestServer, type Handler, type TestServer } from './test-server.js';

/**
 * Every failure the client can report, and every onRetry and onWarning text, searched for the
 * device password (plain and inside Basic credentials) and for a stanza secret. Messages, error
 * data, String(error) and util.inspect with causes are all searched.
 */

const STANZA_SECRET = 'inner-Quokka-5521-secret';
const texts: string[] = [];
const recorders: Recorded[] = [];
const closeLater = useCloseAfterAll();

async function serve(handler: Handler): Promise<TestServer> {
  return closeLater(await startTestServer(handler));
}

function client(...args: Parameters<typeof clientFor>): AdminApi {
  const { api, seen } = clientFor(...args);
  recorders.push(seen);
  return closeLater(api);
}

const pin = (server: TestServer) => ({ kind: 'fingerprint', sha256: server.fingerprintSha256 }) as const;
const stanza = { name: 'eth1', family: 'inet', method: 'dhcp', wpa_password: new Secret(STANZA_SECRET) } as const;

async function collect(promise: Promise<unknown>): Promise<void> {
  texts.push(...textsOf(await failureOf(promise)));
}

describe('no secret in any message', () => {
  it('HTTP failures', async () => {
    for (const status of [400, 401, 404, 405, 409, 413, 417, 500]) {
      const server = await serve((_req, _body, res) => json(res, status, { success: false, error: 'Refused.' }));
      await collect(client(server.url, pin(server)).postStanza(stanza));
    }
    const limited = await serve((_req, _body, res) =>
      json(res, 429, { success: false, error: 'Slow down.' }, { 'retry-after': '0' }),
    );
    await collect(client(limited.url, pin(limited)).restartNetworking());
  });

  it('malformed answers', async () => {
    const html = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>hello</html>');
    });
    await collect(client(html.url, pin(html)).postStanza(stanza));
    const shape = await serve((_req, _body, res) => json(res, 200, { success: true, interfaces: 'none' }));
    await collect(client(shape.url, pin(shape)).listInterfaces('active'));
  });

  it('connection failures and timeouts', async () => {
    const port = await closedPort();
    await collect(client(`https://127.0.0.1:${port}`, { kind: 'insecure' }).listInterfaces('active'));
    await collect(client(`https://127.0.0.1:${port}`, { kind: 'insecure' }).waitUntilAnswering({ timeoutMs: 300 }));
    const reset: TestServer = await serve((req, _body, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('{');
      setTimeout(() => reset.reset(req), 10);
    });
    await collect(client(reset.url, pin(reset)).postStanza(stanza));
    await collect(client(reset.url, pin(reset)).listAcl());
    const silent = await serve(() => undefined);
    await collect(client(silent.url, pin(silent), { requestTimeoutMs: 100 }).listInterfaces('active'));
    await collect(client(silent.url, pin(silent), { requestTimeoutMs: 100 }).postStanza(stanza));
  });

  it('TLS failures and the insecure warning', async () => {
    const server = await serve((_req, _body, res) => json(res, 200, { success: true }));
    await collect(
      client(server.url, { kind: 'fingerprint', sha256: createSelfSignedCertificate().fingerprintSha256 }).postStanza(
        stanza,
      ),
    );
    const pki = deviceCertificates('127.0.0.2');
    await collect(client(server.url, { kind: 'ca', caPem: pki.caPem }).postStanza(stanza));
    client(server.url, { kind: 'insecure' });
  });

  it('none of it contains the password or a stanza secret', () => {
    const retryAndWarningTexts = recorders.flatMap((r) => [
      ...r.warnings,
      ...r.retries.map((info) => JSON.stringify(info)),
    ]);
    // The battery above did produce retries and a warning: the search is not vacuous.
    expect(recorders.some((r) => r.retries.length > 0)).toBe(true);
    expect(recorders.some((r) => r.warnings.length > 0)).toBe(true);
    expect(texts.length).toBeGreaterThan(40);
    const all = [...texts, ...retryAndWarningTexts];
    expectNoSecret(all);
    for (const text of all) expect(text).not.toContain(STANZA_SECRET);
    expect(PASSWORD).not.toBe('');
  });
});
