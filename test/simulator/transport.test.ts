import { X509Certificate } from 'node:crypto';
import { connect, type PeerCertificate } from 'node:tls';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  createSelfSignedCertificate,
  SimulatorError,
  SimulatorErrorCode,
  startSimulator,
} from '../../src/simulator/index.js';
import { createLabPki } from '../support/lab-pki.js';
import { apiClient, useSimulatorApi, interfaceOf } from './sim-client.js';

/** HTTPS with a self-issued certificate, HTTP Basic, and the JSON envelope of every answer. */

const { sim, api } = useSimulatorApi({ password: 'secret-pw' });

function presentedCertificate(url: string): Promise<PeerCertificate> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate());
      socket.end();
    });
    socket.on('error', reject);
  });
}

describe('TLS', () => {
  it('listens on loopback with a self-issued certificate whose fingerprint the handle reports', async () => {
    expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const presented = await presentedCertificate(sim.url);
    expect(presented.fingerprint256).toBe(sim.fingerprintSha256);
    expect(sim.fingerprintSha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    const certificate = new X509Certificate(sim.certificatePem);
    expect(certificate.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(certificate.subjectAltName).toContain('DNS:localhost');
    expect(certificate.publicKey.asymmetricKeyType).toBe('ec');
  });

  it('is trusted by a client pinned to its certificate, and refused by a client pinned to another', async () => {
    expect((await api.get('/appliance/capability')).status).toBe(200);
    const other = new Agent({ connect: { ca: createSelfSignedCertificate().certificatePem } });
    try {
      await expect(request(`${sim.apiUrl}/appliance/capability`, { dispatcher: other })).rejects.toThrow();
    } finally {
      await other.close();
    }
  });

  it('serves a given certificate and key (--cert/--key)', async () => {
    const pki = createLabPki();
    try {
      const given = await startSimulator({
        certificatePem: pki.read('server.pem').toString(),
        privateKeyPem: pki.read('server.key').toString(),
      });
      try {
        const expected = new X509Certificate(pki.read('server.pem')).fingerprint256;
        expect(given.fingerprintSha256).toBe(expected);
        expect((await presentedCertificate(given.url)).fingerprint256).toBe(expected);
      } finally {
        await given.close();
      }
    } finally {
      pki.dispose();
    }
  });

  it('refuses to listen on a non-loopback address without allowRemote', async () => {
    const attempt = startSimulator({ host: '192.0.2.1' });
    await expect(attempt).rejects.toThrow(
      'Refusing to listen on 192.0.2.1: the simulator listens on loopback unless --allow-remote is given.',
    );
    await expect(attempt).rejects.toSatisfy(
      (e: unknown) => e instanceof SimulatorError && e.code === SimulatorErrorCode.Usage,
    );
  });
});

describe('HTTP Basic', () => {
  it('answers 401 without credentials', async () => {
    const res = await request(`${sim.apiUrl}/interface/`, {
      dispatcher: new Agent({ connect: { ca: sim.certificatePem } }),
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="Monitoring Point"');
    expect(await res.body.json()).toEqual({
      success: false,
      error: "Authentication required: send the device's administrative user name and password with HTTP Basic.",
    });
  });

  it('answers 401 to a wrong password or a wrong user', async () => {
    for (const credentials of [{ password: 'wrong' }, { username: 'root', password: 'secret-pw' }]) {
      const client = apiClient(sim, credentials);
      try {
        const answer = await client.get('/interface/?config_state=active');
        expect(answer.status).toBe(401);
        expect(answer.body).toEqual({ success: false, error: 'Bad credentials: the user name or password is wrong.' });
      } finally {
        await client.close();
      }
    }
  });

  it('generates a random password by default and uses "admin"', async () => {
    const other = await startSimulator();
    try {
      expect(other.username).toBe('admin');
      expect(other.password).toMatch(/^[A-Za-z0-9_-]{16}$/);
      expect(other.password).not.toBe(sim.password);
    } finally {
      await other.close();
    }
  });
});

describe('routing', () => {
  it('answers 404 to an unknown path, with a sentence', async () => {
    const answer = await api.get('/nothing/here/');
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ success: false, error: 'No such endpoint: GET /api/v1/nothing/here/.' });
  });

  it('answers 404 to a listed path without its trailing slash, naming the right one', async () => {
    const answer = await api.get('/interface');
    expect(answer.status).toBe(404);
    expect(answer.body.error).toBe(
      'No such endpoint: GET /api/v1/interface (paths end with a slash: /api/v1/interface/).',
    );
  });

  it.each([
    ['PATCH', '/interface/', 'GET, POST'],
    ['GET', '/interface/file/', 'POST'],
    ['GET', '/service/networking/', 'PUT'],
    ['POST', '/appliance/', 'PUT'],
    ['POST', '/access_control/acl/', 'GET, PUT, DELETE'],
  ])('answers 405 to %s %s with Allow: %s', async (method, path, allow) => {
    const answer = await api.call(method, path);
    expect(answer.status).toBe(405);
    expect(answer.headers['allow']).toBe(allow);
    expect(answer.body).toEqual({
      success: false,
      error: `Method ${method} is not allowed on /api/v1${path}; allowed: ${allow}.`,
    });
  });

  it('answers 413 to a JSON body over 64 KiB', async () => {
    const answer = await api.post('/interface/', {
      name: 'eth1',
      family: 'inet',
      method: 'dhcp',
      dns_search: ['x'.repeat(70 * 1024)],
    });
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({ success: false, error: 'Request body is too large.' });
  });
});

describe('IPv6 loopback', () => {
  it('listens on ::1 and reports it on the inet6 stanza of the management interface', async () => {
    const six = await startSimulator({ host: '::1' });
    const client = apiClient(six);
    try {
      expect(six.url).toMatch(/^https:\/\/\[::1\]:\d+$/);
      const eth0 = interfaceOf(await client.get('/interface/eth0/?config_state=active'));
      expect(eth0.families.inet6?.in_use).toEqual({ address: '::1', netmask: '128' });
      expect(eth0.families.inet?.in_use).toEqual({
        address: '198.51.100.10',
        netmask: '255.255.255.0',
        gateway: '198.51.100.1',
      });
    } finally {
      await client.close();
      await six.close();
    }
  });
});
