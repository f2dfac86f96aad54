import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertRealBackendCanRun } from '../dot1x/real-lab.js';
import { KEY_PASSWORD, PFX_PASSWORD, useLabPki } from '../support/lab-pki.js';
import { PortLab, preflightLeftovers, runInLaptop, type LaptopState } from './port-lab.js';
import { ADMIN_PASSWORD, parseReport, preflightStick, type PreflightJson } from './preflight-stick.js';

/**
 * PEAP with inner TLS, and every form of client certificate and key the stick format allows
 * (DER, legacy "Proc-Type" encrypted PEM, legacy RC2/3DES PFX, an EC key node:crypto wrote),
 * tried on a real port: hostapd (wired, internal EAP server) in the switch's namespace, the CLI in
 * the laptop's. Each case asserts the verdict, the port given back, and that neither a passphrase
 * nor a key's bytes reached any output.
 */

const pki = useLabPki();
let lab: PortLab;
let before: LaptopState;

/** The passphrase of the traditional (DEK-Info: DES-EDE3-CBC) PEM key: another one than the lab's. */
const LEGACY_PEM_PASSWORD = 'Legacy-Pem-Secret-4417';

beforeAll(() => {
  assertRealBackendCanRun();
  // A DER certificate beside the lab's DER key.
  pki.openssl(['x509', '-in', pki.path('client.pem'), '-outform', 'DER', '-out', pki.path('client.cert.der')]);
  // OpenSSL's traditional encryption: RFC 1421 headers, the key derived with MD5 (EVP_BytesToKey).
  pki.openssl([
    'ec',
    '-in',
    pki.path('client.key'),
    '-des3',
    '-passout',
    `pass:${LEGACY_PEM_PASSWORD}`,
    '-out',
    pki.path('client-legacy.key'),
  ]);
  // An EC key as node:crypto writes it (SEC1 "EC PRIVATE KEY"), its certificate from the lab CA.
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  pki.write('node-ec.key', privateKey.export({ format: 'pem', type: 'sec1' }));
  const ca = { cert: pki.path('ca.pem'), key: pki.path('ca.key') };
  pki.issue('node-ec', 'client.lab.test', ca, 'client', {
    key: pki.path('node-ec.key'),
    subject: '/CN=client.lab.test',
  });
  lab = new PortLab();
  before = lab.laptopState();
});
// A fresh authenticator per case: after a refusal hostapd holds the port's MAC for its quiet period.
beforeEach(async () => lab.startAuthenticator(pki.dir));
afterEach(async () => lab.stopDaemons());
afterAll(() => lab?.close());

/** Base64 lines of a PEM or the base64 of a binary file: a key's bytes as they would leak. */
function keyMaterial(name: string): string[] {
  const bytes = readFileSync(pki.path(name));
  const text = bytes.toString('latin1');
  if (text.startsWith('-----BEGIN'))
    return text.split('\n').filter((line) => /^[A-Za-z0-9+/=]{40,}$/.test(line.trim()));
  return [bytes.toString('base64').slice(0, 60), bytes.toString('hex').slice(0, 60)];
}

async function preflight(
  stick: string,
  secrets: readonly string[],
): Promise<{ code: number | null; report: PreflightJson }> {
  const run = await runInLaptop(lab, ['preflight', stick, '--port', lab.laptopIf, '--json', '--timeout', '12']);
  expect(secrets.length).toBeGreaterThan(1);
  for (const secret of [ADMIN_PASSWORD, ...secrets]) {
    expect(run.stdout).not.toContain(secret);
    expect(run.stderr).not.toContain(secret);
  }
  expect(lab.laptopState()).toEqual(before);
  expect(preflightLeftovers(run.pid, lab.laptopIf)).toEqual({ namespaces: [], dirs: [], daemons: [] });
  return { code: run.code, report: parseReport(run.stdout) };
}

const tlsStick = (keys: string, files: readonly string[]) =>
  preflightStick(
    pki,
    `eth1:\n  ipv4: { method: manual }\n  dot1x: { eap: tls, identity: client.lab.test, ca_cert: ca.pem, ${keys} }`,
    ['ca.pem', ...files],
  );

const AUTHENTICATED_TLS = {
  outcome: 'authenticated',
  method: 'EAP-TLS',
  cause: 'the port accepted EAP-TLS for identity "client.lab.test"',
};

describe('PEAP with inner TLS on the port', () => {
  const peapTls = (cert: string, key: string) =>
    preflightStick(
      pki,
      `eth1:\n  ipv4: { method: manual }\n  dot1x: { eap: peap, inner: tls, identity: client.lab.test, anonymous_identity: anonymous, ca_cert: ca.pem, inner_tls: { ca_cert: ca.pem, client_cert: ${cert}, private_key: ${key} } }`,
      ['ca.pem', cert, key],
    );

  it('the right client certificate: authenticated, method PEAP-TLS', async () => {
    const { code, report } = await preflight(peapTls('client.pem', 'client.key'), keyMaterial('client.key'));
    expect(report.dot1x).toEqual({
      outcome: 'authenticated',
      method: 'PEAP-TLS',
      cause: 'the port accepted PEAP-TLS for identity "client.lab.test"',
    });
    expect(code).toBe(0);
  });

  it('a client certificate from a foreign CA: refused inside the tunnel, RADIUS ended the inner TLS handshake', async () => {
    const { code, report } = await preflight(
      peapTls('rogue-client.pem', 'rogue-client.key'),
      keyMaterial('rogue-client.key'),
    );
    expect(report.dot1x).toEqual({
      outcome: 'refused',
      method: 'PEAP-TLS',
      cause:
        'RADIUS refused the client certificate of identity "client.lab.test": it ended the TLS handshake (a certificate it does not trust, expired, or revoked)',
    });
    expect(report.dhcp).toEqual({ outcome: 'skipped' });
    expect(code).toBe(1);
  });
});

describe('certificate and key forms on the port (EAP-TLS)', () => {
  it('a DER certificate and a DER key: authenticated', async () => {
    const stick = tlsStick('client_cert: client.cert.der, private_key: client.key.der', [
      'client.cert.der',
      'client.key.der',
    ]);
    const { code, report } = await preflight(stick, keyMaterial('client.key.der'));
    expect(report.dot1x).toEqual(AUTHENTICATED_TLS);
    expect(code).toBe(0);
  });

  it('a traditional encrypted PEM key (Proc-Type: 4,ENCRYPTED, DES-EDE3-CBC) with its passphrase: authenticated', async () => {
    const key = readFileSync(pki.path('client-legacy.key'), 'latin1');
    expect(key).toContain('Proc-Type: 4,ENCRYPTED');
    expect(key).toContain('DEK-Info: DES-EDE3-CBC,');
    const stick = tlsStick(
      `client_cert: client.pem, private_key: client-legacy.key, private_key_password: "${LEGACY_PEM_PASSWORD}"`,
      ['client.pem', 'client-legacy.key'],
    );
    const { code, report } = await preflight(stick, [
      LEGACY_PEM_PASSWORD,
      ...keyMaterial('client-legacy.key'),
      ...keyMaterial('client.key'),
    ]);
    expect(report.dot1x).toEqual(AUTHENTICATED_TLS);
    expect(code).toBe(0);
  });

  it('an encrypted PKCS#8 PEM key with its passphrase: authenticated', async () => {
    expect(readFileSync(pki.path('client-encrypted.key'), 'latin1')).toContain('-----BEGIN ENCRYPTED PRIVATE KEY-----');
    const stick = tlsStick(
      `client_cert: client.pem, private_key: client-encrypted.key, private_key_password: "${KEY_PASSWORD}"`,
      ['client.pem', 'client-encrypted.key'],
    );
    const { code, report } = await preflight(stick, [KEY_PASSWORD, ...keyMaterial('client-encrypted.key')]);
    expect(report.dot1x).toEqual(AUTHENTICATED_TLS);
    expect(code).toBe(0);
  });

  it('a PFX with legacy RC2/3DES encryption (openssl pkcs12 -legacy): authenticated', async () => {
    const stick = tlsStick(`private_key: client-legacy.pfx, private_key_password: "${PFX_PASSWORD}"`, [
      'client-legacy.pfx',
    ]);
    const { code, report } = await preflight(stick, [PFX_PASSWORD, ...keyMaterial('client-legacy.pfx')]);
    expect(report.dot1x).toEqual(AUTHENTICATED_TLS);
    expect(code).toBe(0);
  });

  it('an EC key node:crypto wrote (SEC1 PEM) with its certificate: authenticated', async () => {
    expect(readFileSync(pki.path('node-ec.key'), 'latin1')).toContain('-----BEGIN EC PRIVATE KEY-----');
    const stick = tlsStick('client_cert: node-ec.pem, private_key: node-ec.key', ['node-ec.pem', 'node-ec.key']);
    const { code, report } = await preflight(stick, keyMaterial('node-ec.key'));
    expect(report.dot1x).toEqual(AUTHENTICATED_TLS);
    expect(code).toBe(0);
  });
});
