import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSelfSignedCertificate } from '../../src/simulator/index.js';
import { runCli } from '../support/run-cli.js';
import { useSimulator } from '../support/simulator-fixture.js';
import { PROFILE_ADMIN_PASSWORD, PROFILE_DEVICE, stateDir, stickHead, stickWithConfig } from '../support/stick-workspace.js';

/**
 * Secrets made of ordinary words: the redactor replaces each whole value, in every form, and
 * leaves every other sentence exactly as it was, even one that shares the secret's words
 * ("use a gateway ..., or correct the prefix length"). Real child processes, a real simulated
 * device over HTTPS, and every byte they wrote searched.
 */
const PEAP = 'use a gateway, Mallory!';
const WIFI = 'correct horse battery staple';

/** The value and what programs turn it into: base64 (padded or not, url-safe), hex, URL and form encoding, JSON. */
function formsOf(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  return [
    secret,
    bytes.toString('base64'),
    bytes.toString('base64').replace(/=+$/, ''),
    bytes.toString('base64url'),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%20/g, '+'),
    new URLSearchParams({ v: secret }).toString().slice(2),
    JSON.stringify(secret).slice(1, -1),
  ];
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const interfaces = (gateway: string, caCert = ', ca_cert: certs/radius-ca.pem') => `    interfaces:
      eth1:
        ipv4: { method: static, address: 192.0.2.20/24, gateway: ${gateway} }
        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${PEAP}"${caCert} }
      wlan0:
        wireless: { ssid: CorpWiFi, security: wpa2-personal, passphrase: "${WIFI}" }
        ipv4: { method: dhcp }
`;

const { sim: device } = useSimulator(PROFILE_DEVICE);

describe('secrets made of ordinary words', () => {
  it('leave every other message intact and are never printed in any form', { timeout: 60_000 }, async () => {
    const invalid = stickWithConfig(stickHead(device, interfaces('192.0.3.1')));
    const valid = stickWithConfig(stickHead(device, interfaces('192.0.2.1')));
    const state = stateDir();
    const engine = ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', state];

    const validateText = await runCli(['validate', invalid]);
    const validateJson = await runCli(['validate', '--json', invalid]);
    const planText = await runCli(['plan', valid, ...engine]);
    const planJson = await runCli(['plan', '--json', valid, ...engine]);
    const applyJson = await runCli(['apply', '--json', valid, ...engine]);
    const applyText = await runCli(['apply', valid, ...engine]);
    const runs = [validateText, validateJson, planText, planJson, applyJson, applyText];
    expect(runs.map((r) => [r.code, r.stderr])).toEqual([[1, ''], [1, ''], [2, ''], [2, ''], [0, ''], [0, '']]);

    // The one problem of the invalid file, word for word: the old word masking made it
    // "use a (secret) inside the interface's subnet, or (secret) the prefix length".
    const line = readFileSync(invalid, 'utf8').split('\n').findIndex((l) => l.includes('192.0.3.1')) + 1;
    const column = (readFileSync(invalid, 'utf8').split('\n')[line - 1] ?? '').indexOf('192.0.3.1') + 1;
    const gateway = {
      path: 'monitoring_points[0].interfaces.eth1.ipv4.gateway',
      message: 'gateway 192.0.3.1 is outside the subnet of 192.0.2.20/24',
      hint: "use a gateway inside the interface's subnet, or correct the prefix length",
    };
    expect([line, column]).toEqual([9, 66]);
    expect(validateText.stdout).toBe(`${invalid}:${line}:${column}  ${gateway.path}  ${gateway.message}  (${gateway.hint})\n${invalid}: INVALID (1 error, 0 warnings)\n`);
    expect(JSON.parse(validateJson.stdout)).toMatchObject({ valid: false, problems: [{ severity: 'error', line, column, ...gateway }] });

    // The plan's and apply's own words survive too; the secrets show as "(changed)" or not at all.
    expect(planText.stdout).toContain('      gateway: "192.0.2.1"');
    expect(planText.stdout).toContain('      wpa_password: (changed)');
    expect(planText.stdout).toContain('      passphrase: (changed)');
    expect(applyText.stdout).toContain('RESULT: NO CHANGE (mp1 no-change)');
    expect(JSON.parse(applyJson.stdout.trim().split('\n').at(-1) ?? '{}')).toMatchObject({ type: 'result', outcome: 'changed' });

    const stateFiles = readdirSync(state, { recursive: true, encoding: 'utf8' }).map((f) => join(state, f)).filter((f) => statSync(f).isFile());
    expect(stateFiles.map((f) => f.slice(state.length + 1)).sort()).toEqual(['secrets-record.json', 'secrets-record.key']);
    const everything = [...runs.flatMap((r) => [r.stdout, r.stderr]), ...stateFiles.map((f) => readFileSync(f, 'utf8'))].join('\n');
    const searched = [PEAP, WIFI, PROFILE_ADMIN_PASSWORD].flatMap(formsOf);
    expect(searched).toHaveLength(30);
    expect(searched.filter((form) => everything.includes(form))).toEqual([]);
  });

  it('stay hidden when a device echoes them back base64, hex and URL-encoded', { timeout: 60_000 }, async () => {
    // A device whose 400 quotes each field of our request in three encodings, and the
    // Authorization header as it came: a real HTTPS server on loopback.
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
          res.end(JSON.stringify({ success: true, interfaces: { eth0: { autoneg: true }, eth1: { autoneg: true }, wlan0: { wireless: true } } }));
        } else {
          // Secrets first: the client keeps only the start of a long device sentence.
          const fields = Object.entries(parseObject(body))
            .filter((e): e is [string, string] => typeof e[1] === 'string')
            .sort(([a], [b]) => Number(/pass/.test(b)) - Number(/pass/.test(a)));
          const echoed = fields.map(([k, v]) => `${k}=${Buffer.from(v).toString('base64')}|${Buffer.from(v).toString('hex')}|${encodeURIComponent(v)}`);
          res.statusCode = 400;
          res.end(JSON.stringify({ success: false, error: `refused (${req.headers.authorization ?? ''}): ${echoed.join(' ')}` }));
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
${interfaces('192.0.2.1', '')}`);
      const state = stateDir();
      const engine = ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', state, '--restart-timeout', '5'];
      const runs = [await runCli(['apply', file, ...engine]), await runCli(['apply', '--json', file, ...engine])];
      expect(runs.map((r) => r.code)).toEqual([1, 1]);
      // The device's sentence is there, with the secrets' places taken by the placeholder.
      expect(runs[0]?.stdout).toMatch(/refused \(Basic \(secret\)\): .*wpa_password=\(secret\)\|\(secret\)\|\(secret\)/);
      const stateFiles = readdirSync(state, { recursive: true, encoding: 'utf8' }).map((f) => join(state, f)).filter((f) => statSync(f).isFile());
      const everything = [...runs.flatMap((r) => [r.stdout, r.stderr]), ...stateFiles.map((f) => readFileSync(f, 'utf8'))].join('\n');
      const basic = Buffer.from(`admin:${PROFILE_ADMIN_PASSWORD}`).toString('base64');
      const searched = [...[PEAP, WIFI, PROFILE_ADMIN_PASSWORD].flatMap(formsOf), basic];
      expect(searched).toHaveLength(31);
      expect(searched.filter((form) => everything.includes(form))).toEqual([]);
    } finally {
      server.close();
    }
  });
});
