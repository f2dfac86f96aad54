import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/core/secret.js';
import {
  ServiceBodyTooLargeError,
  ServiceRateLimitedError,
  ServiceResponseError,
  ServiceStatusError,
  ServiceTimeoutError,
  ServiceUnreachableError,
  type DataApi,
} from '../../src/service/index.js';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { closedPort, failureOf, textsOf } from '../support/failures.js';
import {
  clientOf,
  EMAIL,
  expectNoSecret,
  OTHER_TOKEN,
  PASSWORD,
  startService,
  tokenCredentials,
} from './service-fixtures.js';

/** Every documented status and message of the data API, and each failure of the transport, as its own typed error. */

let service: ServiceSimulator;
const clients: DataApi[] = [];

beforeAll(async () => {
  service = await startService();
  service.registerAppliance({ hostname: 'branch-12-mp1', orgId: 12, macAddress: '00:1b:21:3a:4f:10' });
  service.registerAppliance({ hostname: 'hq-mp1', orgId: 40 });
});
afterEach(() => service.clearFaults());
afterAll(async () => {
  for (const api of clients) await api.close();
  await service?.close();
});

function client(...args: Parameters<typeof clientOf>): ReturnType<typeof clientOf> {
  const rig = clientOf(...args);
  clients.push(rig.api);
  return rig;
}

describe('answers', () => {
  it('lists organizations and appliances through zod-checked shapes', async () => {
    const { api } = client(service);
    // The vendor's shapes: displayName, and resolvedIp beside the model's fields.
    expect(await api.listOrganizations()).toEqual([
      { id: 12, displayName: 'Branch Networks' },
      { id: 40, displayName: 'Head Office' },
    ]);
    const listed = await api.listAppliances({ hostname: 'branch-12-mp1' });
    expect(listed).toMatchObject([
      {
        resolvedIp: expect.stringMatching(/^198\.51\.100\.\d+$/) as unknown,
        id: 3141,
        name: 'branch-12-mp1',
        hostname: 'branch-12-mp1',
        orgId: 12,
        macAddress: '00:1b:21:3a:4f:10',
        connectionStatus: 'AVAILABLE',
      },
    ]);
    expect(await api.listAppliances({ mac: '00:1B:21:3A:4F:10' })).toEqual(listed);
    expect(await api.listAppliances({ hostname: 'nobody' })).toEqual([]);
    expect((await api.listAppliances()).map((a) => a.hostname)).toEqual(['branch-12-mp1', 'hq-mp1']);
  });

  it('sends Authorization: Token and Accept: application/json, or Basic e-mail:password', async () => {
    service.clearRequests();
    const { api } = client(service, { credentials: { kind: 'basic', email: EMAIL, password: new Secret(PASSWORD) } });
    expect(await api.listOrganizations()).toHaveLength(2);
    const [entry] = service.requests();
    expect(entry).toMatchObject({ method: 'GET', path: '/api/v3/organization', caller: EMAIL, status: 200 });
  });
});

describe('documented error statuses', () => {
  const operation = 'GET /v3/organization';

  it('400 Bad Request', async () => {
    const { api } = client(service);
    const error = await failureOf(api.listAppliances({ mac: 'not-a-mac' }));
    expect(error).toBeInstanceOf(ServiceStatusError);
    expect(error.code).toBe('MPPROV_SERVICE_BAD_REQUEST');
    // The vendor's body names what is wrong as a second message: both are said.
    expect(error.message).toMatch(
      /refused GET \/v3\/appliance\?mac=not-a-mac as a bad request \(HTTP 400 "Bad Request; mac [^"]+"\)$/,
    );
    expect(error.message.startsWith(`the service at ${service.url} refused`)).toBe(true);
    expect(error.data).toMatchObject({
      url: service.url,
      method: 'GET',
      path: '/v3/appliance?mac=not-a-mac',
      status: 400,
      serviceMessage: expect.stringMatching(/^Bad Request; mac /) as unknown,
    });
  });

  it('401 Bad credentials: a wrong token, and a wrong e-mail password', async () => {
    const wrongToken = 'tok-wrong-Xy-123';
    const error = await failureOf(
      client(service, { credentials: tokenCredentials(wrongToken) }).api.listOrganizations(),
    );
    expect(error.code).toBe('MPPROV_SERVICE_BAD_CREDENTIALS');
    expect(error.message).toBe(
      `the service at ${service.url} does not accept the access token (HTTP 401 "Bad credentials"): it is wrong, expired or revoked`,
    );
    expectNoSecret(textsOf(error), [wrongToken]);
    const basic = await failureOf(
      client(service, {
        credentials: { kind: 'basic', email: EMAIL, password: new Secret('pw-wrong-Qq-77') },
      }).api.listOrganizations(),
    );
    expect(basic.code).toBe('MPPROV_SERVICE_BAD_CREDENTIALS');
    expect(basic.message).toBe(
      `the service at ${service.url} does not accept the e-mail address and password of ${EMAIL} (HTTP 401 "Bad credentials"): it is wrong, expired or revoked`,
    );
    expectNoSecret(textsOf(basic), ['pw-wrong-Qq-77']);
  });

  it('401 Full authentication is required (a proxy that strips the header)', async () => {
    service.setFaults({ error: { name: 'noCredentials' } });
    const error = await failureOf(client(service).api.listOrganizations());
    expect(error.code).toBe('MPPROV_SERVICE_NO_CREDENTIALS');
    expect(error.message).toBe(
      `the service at ${service.url} says no credentials reached it on ${operation} ` +
        '(HTTP 401 "Full authentication is required to access this resource"); a proxy on the way may strip the Authorization header',
    );
  });

  it('401 Failed to decode basic authentication token', async () => {
    service.setFaults({ error: { name: 'undecodable' } });
    const error = await failureOf(client(service).api.listOrganizations());
    expect(error.code).toBe('MPPROV_SERVICE_UNDECODABLE_CREDENTIALS');
    expect(error.message).toBe(
      `the service at ${service.url} could not decode the access token (HTTP 401 "Failed to decode basic authentication token")`,
    );
  });

  it('403 Access is denied: a token without access', async () => {
    const error = await failureOf(
      client(service, { credentials: tokenCredentials(OTHER_TOKEN) }).api.listAppliances({ hostname: 'branch-12-mp1' }),
    );
    expect(error.code).toBe('MPPROV_SERVICE_FORBIDDEN');
    expect(error.message).toBe(
      `the service at ${service.url} denies GET /v3/appliance?hostname=branch-12-mp1 to the access token (HTTP 403 "Access is denied"): no permission for it`,
    );
  });

  it('404 Not found: a service.url without /api', async () => {
    const origin = service.url.replace(/\/api$/, '');
    const error = await failureOf(client(service, { url: origin }).api.listOrganizations());
    expect(error.code).toBe('MPPROV_SERVICE_NOT_FOUND');
    expect(error.message).toBe(
      `the service at ${origin} has no endpoint ${operation} (HTTP 404 "Not found"); check that service.url ends with /api`,
    );
  });

  it('406 Not Acceptable', async () => {
    service.setFaults({ error: { name: 'notAcceptable' } });
    const error = await failureOf(client(service).api.listOrganizations());
    expect(error.code).toBe('MPPROV_SERVICE_NOT_ACCEPTABLE');
    expect(error.message).toBe(
      `the service at ${service.url} refused the headers of ${operation} (HTTP 406 "Not Acceptable")`,
    );
  });

  it('500 Internal server error', async () => {
    service.setFaults({ error: { name: 'internal' } });
    const error = await failureOf(client(service).api.listOrganizations());
    expect(error.code).toBe('MPPROV_SERVICE_INTERNAL_ERROR');
    expect(error.message).toBe(
      `the service at ${service.url} failed internally on ${operation} (HTTP 500 "Internal server error"); retry later`,
    );
  });

  it('429 on every attempt: waited out, then a typed error with the count', async () => {
    service.setFaults({ error: { name: 'tooManyRequests' } });
    const { api, retries } = client(service, { rateLimitedAttempts: 2 });
    const error = await failureOf(api.listOrganizations());
    expect(error).toBeInstanceOf(ServiceRateLimitedError);
    expect(error.code).toBe('MPPROV_SERVICE_RATE_LIMITED');
    expect(error.message).toBe(
      `the service at ${service.url} still refused ${operation} as too many requests (HTTP 429 "Too Many Requests") after 2 attempts`,
    );
    expect(retries).toEqual([
      {
        path: '/v3/organization',
        attempt: 1,
        reason: 'the service answered HTTP 429 (too many requests) and asks to wait 1 s',
        delayMs: 1000,
      },
    ]);
  });
});

describe('transport failures', () => {
  it('a refused connection', async () => {
    const port = await closedPort();
    const url = `https://127.0.0.1:${port}/api`;
    const error = await failureOf(client(service, { url }).api.listOrganizations());
    expect(error).toBeInstanceOf(ServiceUnreachableError);
    expect(error.code).toBe('MPPROV_SERVICE_UNREACHABLE');
    expect(error.message).toBe(`cannot reach ${url}: connection refused`);
    expect(error.data).toMatchObject({ problem: 'refused', requestSent: false });
    // One class for both clients' transport failures: the peer tells them apart, and the code.
    expect(error).toMatchObject({ peer: 'service' });
  });

  it('a slow answer past the request deadline', async () => {
    service.setFaults({ latencyMs: 1_500 });
    const error = await failureOf(client(service, { requestTimeoutMs: 300 }).api.listOrganizations());
    expect(error).toBeInstanceOf(ServiceTimeoutError);
    expect(error.code).toBe('MPPROV_SERVICE_TIMEOUT');
    expect(error.message).toBe(`GET /v3/organization to ${service.url} timed out after 0.3 s`);
  });

  it('a body that is not JSON, and JSON of the wrong shape', async () => {
    service.setFaults({ rawBody: { text: '<html><body>Bad gateway</body></html>', count: 1 } });
    const notJson = await failureOf(client(service).api.listOrganizations());
    expect(notJson).toBeInstanceOf(ServiceResponseError);
    expect(notJson.code).toBe('MPPROV_SERVICE_RESPONSE');
    expect(notJson.message).toBe(
      `the service at ${service.url} answered GET /v3/organization with HTTP 200 and a body that is not JSON (text/html): "<html><body>Bad gateway</body></html>"`,
    );
    service.setFaults({
      rawBody: {
        text: '[{"id": 3, "name": "mp", "hostname": "mp", "orgId": 12, "connectionStatus": 1}]',
        contentType: 'application/json',
      },
    });
    const shape = await failureOf(client(service).api.listAppliances({ hostname: 'mp' }));
    expect(shape.code).toBe('MPPROV_SERVICE_RESPONSE');
    expect(shape.message).toBe(
      `the answer of the service at ${service.url} to GET /v3/appliance?hostname=mp does not have the expected shape: ` +
        '[0].connectionStatus: expected string, received number',
    );
  });

  it('an endless body: cut at 4 MiB while streaming, the error names the host, and the client goes on', async () => {
    service.setFaults({ oversizedBody: { bytes: 64 * 1024 * 1024, count: 1 } });
    const { api } = client(service);
    const heapBefore = process.memoryUsage().rss;
    const error = await failureOf(api.listAppliances({ hostname: 'branch-12-mp1' }));
    expect(error).toBeInstanceOf(ServiceBodyTooLargeError);
    expect(error.code).toBe('MPPROV_SERVICE_BODY_TOO_LARGE');
    expect(error.message).toBe(
      `the service at ${service.url} sent more than 4 MiB in answer to GET /v3/appliance?hostname=branch-12-mp1; mpprov stopped reading it`,
    );
    expect(error.message).toContain('127.0.0.1');
    // Far less than the 64 MiB offered was taken into memory.
    expect(process.memoryUsage().rss - heapBefore).toBeLessThan(48 * 1024 * 1024);
    expect(await api.listAppliances({ hostname: 'branch-12-mp1' })).toHaveLength(1);
  });

  it('a declared Content-Length over the cap is refused before reading', async () => {
    const { api } = client(service, { maxBodyBytes: 64 });
    const error = await failureOf(api.listOrganizations());
    expect(error.code).toBe('MPPROV_SERVICE_BODY_TOO_LARGE');
    expect(error.message).toBe(
      `the service at ${service.url} sent more than 64 bytes in answer to GET /v3/organization; mpprov stopped reading it`,
    );
  });
});
