import { createServer as createTcpServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DeviceAuthError,
  DeviceHttpError,
  DeviceRateLimitedError,
  DeviceRefusedError,
  DeviceResponseError,
  DeviceTimeoutError,
  DeviceUnreachableError,
} from '../../src/client/index.js';
import { Secret } from '../../src/core/secret.js';
import { closedPort, failureOf, textsOf } from '../support/failures.js';
import { BASIC, clientFor, expectNoSecret } from './client-fixtures.js';
import { json, startTestServer, type Handler } from './test-server.js';

/** Failure shapes against small scripted HTTPS servers; every message asserted word for word. */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(handler: Handler, options: Parameters<typeof clientFor>[2] = {}) {
  const server = await startTestServer(handler);
  const { api, seen } = clientFor(server.url, { kind: 'fingerprint', sha256: server.fingerprintSha256 }, options);
  cleanups.push(
    () => server.close(),
    () => api.close(),
  );
  return { server, api, seen };
}

const STANZA = { name: 'eth1', family: 'inet', method: 'static', address: '192.0.2.10' } as const;

describe('HTTP status failures', () => {
  it('401: bad credentials names the user and the device, never the password', async () => {
    const { server, api } = await serve((_req, _body, res) =>
      json(res, 401, { success: false, error: 'Bad credentials.' }),
    );
    const error = await failureOf(api.listInterfaces('active'));
    expect(error).toBeInstanceOf(DeviceAuthError);
    expect(error.message).toBe(`bad credentials for admin at https://127.0.0.1:${server.port}`);
    expect(error.code).toBe('MPPROV_DEVICE_AUTH');
    expect(error.data).toEqual({
      url: server.url,
      method: 'GET',
      path: '/interface/?config_state=active',
      subject: undefined,
      status: 401,
      deviceMessage: 'Bad credentials.',
      username: 'admin',
    });
    expect(server.requests).toHaveLength(1);
    expectNoSecret(textsOf(error));
  });

  it('400: quotes the device sentence and names the operation and the stanza', async () => {
    const sentence = 'Field "netmask" is required with method "static".';
    const { api } = await serve((_req, _body, res) => json(res, 400, { success: false, error: sentence }));
    const error = await failureOf(api.postStanza(STANZA));
    expect(error).toBeInstanceOf(DeviceRefusedError);
    expect(error.code).toBe('MPPROV_DEVICE_REFUSED');
    expect(error.message).toBe(`the device refused POST /interface/ (eth1 inet): ${sentence}`);
    expect(error.data).toMatchObject({
      status: 400,
      deviceMessage: sentence,
      method: 'POST',
      path: '/interface/',
      subject: 'eth1 inet',
    });
  });

  it('200 with success false is a refusal too', async () => {
    const { api } = await serve((_req, _body, res) => json(res, 200, { success: false, error: 'Nothing to do.' }));
    const error = await failureOf(api.postStanza(STANZA));
    expect(error).toBeInstanceOf(DeviceRefusedError);
    expect(error.message).toBe('the device refused POST /interface/ (eth1 inet): Nothing to do.');
  });

  it('500: says the device failed internally, and a GET is not retried for it', async () => {
    const { server, api, seen } = await serve((_req, _body, res) =>
      json(res, 500, { success: false, error: 'Internal server error.' }),
    );
    const error = await failureOf(api.listInterfaces('active'));
    expect(error).toBeInstanceOf(DeviceHttpError);
    expect(error.code).toBe('MPPROV_DEVICE_HTTP');
    expect(error.message).toBe(
      'the device failed internally on GET /interface/?config_state=active (HTTP 500): Internal server error.',
    );
    expect(server.requests).toHaveLength(1);
    expect(seen.retries).toEqual([]);
  });

  it.each([
    [
      404,
      'DELETE',
      'the device has no such resource for DELETE /interface/eth1/?family=inet6 (HTTP 404): Interface "eth1" has no inet6 stanza.',
    ],
    [
      405,
      'DELETE',
      'the device does not allow DELETE /interface/eth1/?family=inet6 (HTTP 405; its firmware may not follow Admin API v1): Interface "eth1" has no inet6 stanza.',
    ],
    [
      409,
      'DELETE',
      'the device refused DELETE /interface/eth1/?family=inet6 as a conflict with its current configuration: Interface "eth1" has no inet6 stanza.',
    ],
    [
      413,
      'DELETE',
      'the device refused DELETE /interface/eth1/?family=inet6 as too large: Interface "eth1" has no inet6 stanza.',
    ],
    [
      417,
      'DELETE',
      'the device refused DELETE /interface/eth1/?family=inet6 because of the request\'s Expect header (HTTP 417): Interface "eth1" has no inet6 stanza.',
    ],
    [
      503,
      'DELETE',
      'the device answered DELETE /interface/eth1/?family=inet6 with HTTP 503: Interface "eth1" has no inet6 stanza.',
    ],
  ])('%i: one sentence per status', async (status, _method, message) => {
    const { api } = await serve((_req, _body, res) =>
      json(res, status, { success: false, error: 'Interface "eth1" has no inet6 stanza.' }),
    );
    const error = await failureOf(api.deleteStanza('eth1', 'inet6'));
    expect(error.message).toBe(message);
    expect(error.data).toMatchObject({ status, method: 'DELETE', path: '/interface/eth1/?family=inet6' });
  });

  it('an error answer without a JSON sentence still gets its sentence', async () => {
    const { api } = await serve((_req, _body, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>Bad gateway</html>');
    });
    const error = await failureOf(api.reboot());
    expect(error.message).toBe(
      'the device answered PUT /appliance/?action=reboot with HTTP 502: (the device gave no reason)',
    );
  });

  it('getInterface answers undefined for 404', async () => {
    const { api } = await serve((_req, _body, res) =>
      json(res, 404, { success: false, error: 'Interface "eth9" has no active configuration.' }),
    );
    expect(await api.getInterface('eth9', 'active')).toBeUndefined();
  });
});

describe('malformed answers', () => {
  it('a body that is not JSON', async () => {
    const { api } = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Welcome</body></html>');
    });
    const error = await failureOf(api.listInterfaces('active'));
    expect(error).toBeInstanceOf(DeviceResponseError);
    expect(error.code).toBe('MPPROV_DEVICE_RESPONSE');
    expect(error.message).toBe(
      'the device answered GET /interface/?config_state=active with HTTP 200 and a body that is not JSON (text/html): "<html><body>Welcome</body></html>"',
    );
  });

  it('an answer that is not HTTP at all', async () => {
    const { api } = await serve((req) => {
      req.socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n');
    });
    const error = await failureOf(api.getCapability());
    expect(error).toBeInstanceOf(DeviceResponseError);
    expect(error.message).toBe(
      'the device answered GET /appliance/capability with something that is not HTTP/1.1: ' +
        'Response does not match the HTTP/1.1 protocol (Expected HTTP/, RTSP/ or ICE/)',
    );
    expect(error.data).toMatchObject({ problem: 'not-http', method: 'GET', path: '/appliance/capability' });
  });

  it('an empty body where JSON belongs', async () => {
    const { api } = await serve((_req, _body, res) => {
      res.end();
    });
    const error = await failureOf(api.listAcl());
    expect(error.message).toBe(
      'the device answered GET /access_control/acl/ with HTTP 200 and an empty body instead of JSON',
    );
  });

  it('JSON of the wrong shape names the field', async () => {
    const { api } = await serve((_req, _body, res) =>
      json(res, 200, { success: true, interfaces: [{ name: 7, families: {} }] }),
    );
    const error = await failureOf(api.listInterfaces('pending'));
    expect(error).toBeInstanceOf(DeviceResponseError);
    expect(error.message).toBe(
      "the device's answer to GET /interface/?config_state=pending does not have the expected shape: interfaces[0].name: expected string, received number",
    );
  });

  it('JSON without the success envelope', async () => {
    const { api } = await serve((_req, _body, res) => json(res, 200, { rules: [] }));
    const error = await failureOf(api.listAcl());
    expect(error.message).toBe(
      "the device's answer to GET /access_control/acl/ does not have the expected shape: success: expected boolean, received undefined",
    );
  });

  it('a stanza field of the wrong type, deep inside', async () => {
    const { api } = await serve((_req, _body, res) =>
      json(res, 200, {
        success: true,
        interfaces: [{ name: 'eth0', config_state: 'active', families: { inet: { method: 'dhcp', mtu: 'big' } } }],
      }),
    );
    const error = await failureOf(api.listInterfaces('active'));
    expect(error.message).toBe(
      "the device's answer to GET /interface/?config_state=active does not have the expected shape: interfaces[0].families.inet.mtu: expected number, received string",
    );
  });
});

describe('tolerated shapes', () => {
  it('the flat GET shape becomes the families shape, unknown fields kept', async () => {
    const { api } = await serve((_req, _body, res) =>
      json(res, 200, {
        success: true,
        interfaces: [
          {
            name: 'eth0',
            family: 'inet',
            config_state: 'active',
            method: 'static',
            address: '192.0.2.10',
            netmask: '255.255.255.0',
            vendor_flag: 3,
          },
          { name: 'eth0', family: 'inet6', method: 'auto' },
          { name: 'eth1', family: 'inet', method: 'dhcp' },
        ],
      }),
    );
    expect(await api.listInterfaces('active')).toEqual([
      {
        name: 'eth0',
        configState: 'active',
        families: {
          inet: { method: 'static', address: '192.0.2.10', netmask: '255.255.255.0', vendor_flag: 3 },
          inet6: { method: 'auto' },
        },
        extra: {},
      },
      { name: 'eth1', configState: 'active', families: { inet: { method: 'dhcp' } }, extra: {} },
    ]);
  });

  it('the families shape keeps null (pending removal) and interface-level extras', async () => {
    const { api } = await serve((_req, _body, res) =>
      json(res, 200, {
        success: true,
        interfaces: [
          {
            name: 'eth1',
            config_state: 'pending',
            families: { inet: { method: 'dhcp', wpa_password_set: true }, inet6: null },
          },
        ],
      }),
    );
    expect(await api.listInterfaces('pending')).toEqual([
      {
        name: 'eth1',
        configState: 'pending',
        families: { inet: { method: 'dhcp', wpa_password_set: true }, inet6: null },
        extra: {},
      },
    ]);
  });

  it.each([
    ['a flat interface', { interface: { name: 'wlan0', family: 'inet', method: 'dhcp', ssid: 'lab' } }],
    ['a list of flat stanzas', { interface: [{ family: 'inet', method: 'dhcp', ssid: 'lab' }] }],
    ['the flat stanza at the top level', { name: 'wlan0', family: 'inet', method: 'dhcp', ssid: 'lab' }],
    [
      'the families shape',
      { interface: { name: 'wlan0', config_state: 'active', families: { inet: { method: 'dhcp', ssid: 'lab' } } } },
    ],
  ])('getInterface accepts %s', async (_label, body) => {
    const { api } = await serve((_req, _body, res) => json(res, 200, { success: true, ...body }));
    expect(await api.getInterface('wlan0', 'active')).toEqual({
      name: 'wlan0',
      configState: 'active',
      families: { inet: { method: 'dhcp', ssid: 'lab' } },
      extra: {},
    });
  });
});

describe('connection failures and retries', () => {
  it('connection refused: a GET is retried with backoff, then one clear sentence', async () => {
    const port = await closedPort();
    const { api, seen } = clientFor(`https://127.0.0.1:${port}`, { kind: 'insecure' });
    cleanups.push(() => api.close());
    const error = await failureOf(api.getCapability());
    expect(error).toBeInstanceOf(DeviceUnreachableError);
    expect(error.code).toBe('MPPROV_DEVICE_UNREACHABLE');
    expect(error.message).toBe(`cannot reach https://127.0.0.1:${port}: connection refused`);
    expect(error.data).toMatchObject({ problem: 'refused', requestSent: false, socketCode: 'ECONNREFUSED' });
    expect(error).toMatchObject({ peer: 'device' });
    expect(seen.retries).toEqual([
      { method: 'GET', path: '/appliance/capability', attempt: 1, reason: error.message, delayMs: 250 },
      { method: 'GET', path: '/appliance/capability', attempt: 2, reason: error.message, delayMs: 500 },
    ]);
  });

  it('connection refused before connecting: a write is retried too (nothing was sent)', async () => {
    const port = await closedPort();
    const { api, seen } = clientFor(`https://127.0.0.1:${port}`, { kind: 'insecure' });
    cleanups.push(() => api.close());
    const error = await failureOf(api.postStanza(STANZA));
    expect(error.message).toBe(`cannot reach https://127.0.0.1:${port}: connection refused`);
    expect(seen.retries.map((r) => [r.method, r.attempt])).toEqual([
      ['POST', 1],
      ['POST', 2],
    ]);
  });

  it('reset mid-response: a GET is retried, then says the connection was lost', async () => {
    const { server, api, seen } = await serve((req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"success": true, "inter');
      setTimeout(() => server.reset(req), 20);
    });
    const error = await failureOf(api.listInterfaces('active'));
    expect(error).toBeInstanceOf(DeviceUnreachableError);
    expect(error.message).toBe(
      `lost the connection to ${server.url} during GET /interface/?config_state=active: connection reset`,
    );
    expect(server.requests).toHaveLength(3);
    expect(seen.retries.map((r) => r.attempt)).toEqual([1, 2]);
  });

  it('reset mid-response: a POST is never sent twice', async () => {
    const { server, api, seen } = await serve((req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"succ');
      setTimeout(() => server.reset(req), 20);
    });
    const error = await failureOf(api.postStanza(STANZA));
    expect(error.message).toBe(
      `lost the connection to ${server.url} during POST /interface/ (eth1 inet): connection reset; the device may or may not have applied it`,
    );
    expect(error.data).toMatchObject({ problem: 'reset', requestSent: true });
    expect(server.requests).toHaveLength(1);
    expect(seen.retries).toEqual([]);
  });

  it('the device closing the connection without an answer', async () => {
    const { server, api } = await serve((req) => {
      req.socket.destroy();
    });
    const error = await failureOf(
      api.deleteAcl({
        action: 'permit',
        protocol: 'tcp',
        from_port: 443,
        to_port: 443,
        source_addresses: ['10.0.0.0/8'],
        interfaces: ['eth0'],
      }),
    );
    expect(error.message).toBe(
      `lost the connection to ${server.url} during DELETE /access_control/acl/ (tcp 443 from 10.0.0.0/8 on eth0): the device closed the connection; the device may or may not have applied it`,
    );
    expect(server.requests).toHaveLength(1);
  });

  it('no answer in time: a GET says which operation timed out and after how long, after its retries', async () => {
    const { server, api, seen } = await serve(() => undefined, { requestTimeoutMs: 150 });
    const error = await failureOf(api.listInterfaces('active'));
    expect(error).toBeInstanceOf(DeviceTimeoutError);
    expect(error.code).toBe('MPPROV_DEVICE_TIMEOUT');
    expect(error.message).toBe('GET /interface/?config_state=active timed out after 0.15 s');
    expect(error.data).toMatchObject({ phase: 'response', timeoutMs: 150 });
    expect(server.requests).toHaveLength(3);
    expect(seen.retries).toHaveLength(2);
  });

  it('no answer in time: a POST is not retried', async () => {
    const { server, api, seen } = await serve(() => undefined, { requestTimeoutMs: 150 });
    const error = await failureOf(api.postStanza(STANZA));
    expect(error.message).toBe('POST /interface/ (eth1 inet) timed out after 0.15 s');
    expect(server.requests).toHaveLength(1);
    expect(seen.retries).toEqual([]);
  });

  it('headers sent, then the body stalls', async () => {
    const { api } = await serve(
      (_req, _body, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"success":');
      },
      { requestTimeoutMs: 150 },
    );
    const error = await failureOf(api.reboot());
    expect(error.message).toBe('PUT /appliance/?action=reboot timed out after 0.15 s');
  });

  it('no TLS handshake in time: a connect timeout', async () => {
    const sockets = new Set<Socket>();
    const silent = createTcpServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const { api } = clientFor(`https://127.0.0.1:${port}`, { kind: 'insecure' }, { connectTimeoutMs: 150 });
    cleanups.push(() => api.close());
    const error = await failureOf(api.restartNetworking());
    expect(error).toBeInstanceOf(DeviceTimeoutError);
    expect(error.message).toBe(
      `PUT /service/networking/?action=restart timed out after 0.15 s while connecting to https://127.0.0.1:${port}`,
    );
    expect(error.data).toMatchObject({ phase: 'connect', timeoutMs: 150 });
  });
});

describe('429 Too Many Requests', () => {
  it('waits Retry-After and tries again, then succeeds', async () => {
    const { server, api, seen } = await serve((_req, _body, res, index) => {
      if (index === 0) json(res, 429, { success: false, error: 'Too many service actions.' }, { 'retry-after': '1' });
      else json(res, 202, { success: true });
    });
    await api.restartNetworking();
    expect(server.requests.map((r) => [r.method, r.url, r.body.toString()])).toEqual([
      ['PUT', '/api/v1/service/networking/?action=restart', '{}'],
      ['PUT', '/api/v1/service/networking/?action=restart', '{}'],
    ]);
    expect(seen.retries).toEqual([
      {
        method: 'PUT',
        path: '/service/networking/?action=restart',
        attempt: 1,
        reason: 'the device answered HTTP 429 (too many requests) and asks to wait 1 s',
        delayMs: 1000,
      },
    ]);
  });

  it('gives up after a bounded number of attempts', async () => {
    const { server, api } = await serve((_req, _body, res) =>
      json(res, 429, { success: false, error: 'Too many service actions.' }, { 'retry-after': '0' }),
    );
    const error = await failureOf(api.restartNetworking());
    expect(error).toBeInstanceOf(DeviceRateLimitedError);
    expect(error.code).toBe('MPPROV_DEVICE_RATE_LIMITED');
    expect(error.message).toBe(
      'the device still refused PUT /service/networking/?action=restart as too many requests (HTTP 429) after 5 attempts: Too many service actions.',
    );
    expect(server.requests).toHaveLength(5);
  });
});

describe('what goes on the wire', () => {
  it('Basic auth and Accept on every request, Content-Type on JSON bodies, one kept-alive connection', async () => {
    let sockets = new Set<unknown>();
    const { server, api } = await serve((req, _body, res) => {
      sockets.add(req.socket);
      json(res, 200, { success: true, interfaces: [], rules: [] });
    });
    await api.listInterfaces('active');
    await api.postStanza(STANZA);
    await api.listAcl();
    const [get, post] = server.requests;
    expect(get?.headers['authorization']).toBe(BASIC);
    expect(get?.headers['accept']).toBe('application/json');
    expect(get?.headers['content-type']).toBeUndefined();
    expect(post?.headers['authorization']).toBe(BASIC);
    expect(post?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(post?.body.toString() ?? '')).toEqual(STANZA);
    expect(sockets.size).toBe(1);
    sockets = new Set();
  });

  it('write-only fields given as Secret are revealed into the body, and only there', async () => {
    const { server, api } = await serve((_req, _body, res) => json(res, 200, { success: true }));
    const passphrase = new Secret('correct horse battery');
    await api.postStanza({
      name: 'wlan0',
      family: 'inet',
      method: 'dhcp',
      ssid: 'lab',
      security: 'wpa2_personal',
      passphrase,
    });
    await api.updateStanza('wlan0', { family: 'inet', passphrase, dns_search: null });
    expect(server.requests.map((r) => JSON.parse(r.body.toString()) as unknown)).toEqual([
      {
        name: 'wlan0',
        family: 'inet',
        method: 'dhcp',
        ssid: 'lab',
        security: 'wpa2_personal',
        passphrase: 'correct horse battery',
      },
      { family: 'inet', passphrase: 'correct horse battery', dns_search: null },
    ]);
    expect(server.requests[1]?.url).toBe('/api/v1/interface/wlan0/');
  });

  it('uploads all files in one multipart request without an Expect header', async () => {
    const { server, api } = await serve((_req, _body, res) =>
      json(res, 200, {
        success: true,
        files: { wpa_ca_cert: 'ca-1.pem', wpa_private_key: 'key-1.pem', not_a_slot: 'x' },
      }),
    );
    const stored = await api.uploadFiles([
      { slot: 'wpa_ca_cert', filename: 'ca-1.pem', bytes: new TextEncoder().encode('CA BYTES') },
      { slot: 'wpa_private_key', filename: 'key-1.pem', bytes: new Uint8Array([0, 1, 2, 255]) },
    ]);
    expect(stored).toEqual({ wpa_ca_cert: 'ca-1.pem', wpa_private_key: 'key-1.pem' });
    const [upload] = server.requests;
    expect(upload?.url).toBe('/api/v1/interface/file/');
    expect(upload?.headers['expect']).toBeUndefined();
    expect(upload?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(Number(upload?.headers['content-length'])).toBe(upload?.body.length);
    const form = await new Response(upload?.body, {
      headers: { 'content-type': upload?.headers['content-type'] ?? '' },
    }).formData();
    const ca = form.get('wpa_ca_cert') as File;
    const key = form.get('wpa_private_key') as File;
    expect([ca.name, await ca.text()]).toEqual(['ca-1.pem', 'CA BYTES']);
    expect([key.name, [...new Uint8Array(await key.arrayBuffer())]]).toEqual(['key-1.pem', [0, 1, 2, 255]]);
  });
});
