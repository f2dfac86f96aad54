import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createSelfSignedCertificate } from '../../src/simulator/index.js';
import { applyFile } from './apply-helpers.js';
import { PROFILE_ADMIN_PASSWORD, stickWithConfig } from '../support/stick-workspace.js';

/**
 * A device whose 400 quotes the request body back, secrets and all: nothing of it may reach
 * mpprov's events or results. (A real HTTPS server on loopback; the simulator never echoes.)
 */
describe('a device that echoes our request in its error', () => {
  it('cannot make mpprov show a secret', async () => {
    const cert = createSelfSignedCertificate();
    const server = createServer({ cert: cert.certificatePem, key: cert.privateKeyPem }, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        const path = req.url ?? '';
        if (req.method === 'GET' && path.startsWith('/api/v1/interface/')) {
          res.end(JSON.stringify({ success: true, interfaces: [{ name: 'eth0', families: { inet: { method: 'dhcp', in_use: { address: '127.0.0.1' } } } }] }));
        } else if (req.method === 'GET' && path.startsWith('/api/v1/appliance/capability')) {
          res.end(JSON.stringify({ success: true, interfaces: { eth0: { autoneg: true }, wlan0: { wireless: true } } }));
        } else {
          res.statusCode = 400;
          res.end(JSON.stringify({ success: false, error: `bad request from ${req.headers.authorization ?? ''}; body was ${body}` }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const file = stickWithConfig(`version: 1
monitoring_points:
  - name: mp1
    url: ${url}
    password_file: secrets/admin.pw
    tls: { fingerprint_sha256: "${cert.fingerprintSha256}" }
    interfaces:
      wlan0:
        wireless: { ssid: Corp, security: wpa2-personal, passphrase: "Echoed-SeCrEt-Pass" }
        ipv4: { method: dhcp }
`);
      const { result, events } = await applyFile(file);
      expect(result.devices[0]?.outcome).toBe('failed');
      expect(result.devices[0]?.message).toContain('(secret)');
      const everything = JSON.stringify({ result, events });
      expect(everything).not.toContain('Echoed-SeCrEt-Pass');
      expect(everything).not.toContain(PROFILE_ADMIN_PASSWORD);
      expect(everything).not.toContain(Buffer.from(`admin:${PROFILE_ADMIN_PASSWORD}`).toString('base64'));
    } finally {
      server.close();
    }
  });
});
