import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { KEY_PASSWORD, PFX_PASSWORD, useLabPki } from '../support/lab-pki.js';
import { useSimulator } from '../support/simulator-fixture.js';
import { curl } from './sim-client.js';

/**
 * The device's own check of uploaded files (docs/device-model.md, "Requests": certificates PEM or DER,
 * private keys PEM, DER or PFX; a file of the wrong kind gets 400 naming the part), with files
 * openssl made, uploaded with the real curl binary as the vendor documents it. The simulator
 * reads each file as OpenSSL would; it shares no code with the agent's credential checks, so the
 * two can disagree (a PEM label that lies, a certificate and its key in one file).
 */

const run = promisify(execFile);
const pki = useLabPki();
const { sim } = useSimulator({ serviceRateLimit: false });
let auth: string[];

const CERT_SLOTS = ['wpa_ca_cert', 'wpa_client_cert', 'wpa_ca_cert2', 'wpa_client_cert2'] as const;
const KEY_SLOTS = ['wpa_private_key', 'wpa_private_key2'] as const;

beforeAll(async () => {
  const openssl = (...args: string[]) => run('openssl', args, { cwd: pki.dir });
  const pem = (label: string, der: Buffer) =>
    `-----BEGIN ${label}-----\n${der.toString('base64').replace(/.{64}/g, '$&\n')}\n-----END ${label}-----\n`;
  await Promise.all([
    openssl('x509', '-in', 'ca.pem', '-addtrust', 'serverAuth', '-trustout', '-out', 'trusted.pem'),
    openssl('req', '-in', 'client.csr', '-outform', 'DER', '-out', 'client.csr.der'),
    openssl('pkey', '-in', 'client.key', '-pubout', '-out', 'client.pub'),
    openssl('pkey', '-in', 'client.key', '-pubout', '-outform', 'DER', '-out', 'client.pub.der'),
    openssl('ecparam', '-name', 'prime256v1', '-genkey', '-out', 'ec-sec1.key'),
    openssl(
      'pkcs8',
      '-topk8',
      '-in',
      'client.key',
      '-v2',
      'aes-256-cbc',
      '-passout',
      `pass:${KEY_PASSWORD}`,
      '-outform',
      'DER',
      '-out',
      'client-encrypted.der',
    ),
    openssl(
      'pkcs12',
      '-export',
      '-in',
      'client.pem',
      '-inkey',
      'client.key',
      '-passout',
      'pass:',
      '-out',
      'no-password.pfx',
    ),
    openssl('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:1024', '-out', 'rsa.key'),
  ]);
  await Promise.all([
    openssl('ec', '-in', 'ec-sec1.key', '-outform', 'DER', '-out', 'ec-sec1.der'),
    openssl('rsa', '-in', 'rsa.key', '-traditional', '-out', 'rsa-pkcs1.key'),
    openssl('rsa', '-in', 'rsa.key', '-traditional', '-outform', 'DER', '-out', 'rsa-pkcs1.der'),
    openssl(
      'rsa',
      '-in',
      'rsa.key',
      '-traditional',
      '-aes128',
      '-passout',
      `pass:${KEY_PASSWORD}`,
      '-out',
      'rsa-legacy-encrypted.key',
    ),
  ]);
  const caPem = pki.read('ca.pem');
  const caDer = pki.read('ca.der');
  const clientPem = pki.read('client.pem');
  const clientKey = pki.read('client.key');
  const clientKeyDer = pki.read('client.key.der');
  const pfx = pki.read('client.pfx');
  await Promise.all([
    writeFile(pki.path('chain.pem'), Buffer.concat([clientPem, caPem])),
    writeFile(pki.path('cert-and-key.pem'), Buffer.concat([clientPem, clientKey])),
    // Labels that lie: a key under a CERTIFICATE label, a certificate under a PRIVATE KEY label.
    writeFile(pki.path('key-labelled-certificate.pem'), pem('CERTIFICATE', clientKeyDer)),
    writeFile(pki.path('certificate-labelled-key.pem'), pem('PRIVATE KEY', caDer)),
    writeFile(pki.path('truncated.der'), caDer.subarray(0, caDer.length - 10)),
    writeFile(pki.path('truncated.pfx'), pfx.subarray(0, pfx.length - 20)),
    writeFile(pki.path('empty.pem'), ''),
    writeFile(pki.path('notes.txt'), 'the CA certificate is on the other stick\n'),
  ]);
  await writeFile(pki.path('device.pem'), sim.certificatePem);
  // Real HTTPS: curl checks the device's certificate, no -k.
  auth = ['--cacert', pki.path('device.pem'), '-u', `${sim.username}:${sim.password}`, '-H', 'Expect:'];
});

/** One POST /interface/file/ with curl -F, a part per [slot, file]; each part named after its file. */
async function upload(parts: readonly (readonly [string, string])[]): Promise<{ status: number; body: unknown }> {
  const form = parts.flatMap(([slot, file]) => ['-F', `${slot}=@${pki.path(file)};filename=${file}`]);
  const result = await curl([...auth, ...form, `${sim.apiUrl}/interface/file/`]);
  expect(result.exitCode).toBe(0);
  return { status: result.status, body: JSON.parse(result.body) };
}

async function accepted(slots: readonly string[], file: string, kind: string): Promise<void> {
  await sim.reset();
  const answer = await upload(slots.map((slot) => [slot, file] as const));
  expect(answer).toEqual({
    status: 200,
    body: { success: true, files: Object.fromEntries(slots.map((slot) => [slot, file])) },
  });
  const stored = sim.state().files;
  expect(stored).toHaveLength(slots.length);
  expect(stored.map((f) => [f.slot, f.name, f.kind])).toEqual(slots.map((slot) => [slot, file, kind]));
  // Byte for byte what curl sent.
  const sent = await readFile(pki.path(file));
  expect(stored.every((f) => f.size === sent.length)).toBe(true);
}

describe('certificate slots take certificates, PEM or DER', () => {
  it.each([
    ['a PEM certificate', 'ca.pem', 'pem-certificate'],
    ['a DER certificate', 'ca.der', 'der-certificate'],
    ['a PEM chain of two certificates', 'chain.pem', 'pem-certificate'],
    ['an OpenSSL TRUSTED CERTIFICATE', 'trusted.pem', 'pem-certificate'],
  ])('accepts %s in all four at once', async (_label, file, kind) => {
    await accepted(CERT_SLOTS, file, kind);
  });
});

describe('key slots take private keys, PEM, DER or PFX', () => {
  it.each([
    ['a PKCS#8 PEM key (EC)', 'client.key', 'pem-private-key'],
    ['a PKCS#1 PEM key (RSA)', 'rsa-pkcs1.key', 'pem-private-key'],
    ['a SEC1 PEM key after its EC PARAMETERS block', 'ec-sec1.key', 'pem-private-key'],
    ['the certificate and then its key in one PEM file', 'cert-and-key.pem', 'pem-private-key'],
    ['an encrypted PKCS#8 PEM key', 'client-encrypted.key', 'pem-encrypted-private-key'],
    ['a PEM key with legacy (Proc-Type) encryption', 'rsa-legacy-encrypted.key', 'pem-encrypted-private-key'],
    ['a PKCS#8 DER key', 'client.key.der', 'der-private-key'],
    ['a PKCS#1 DER key', 'rsa-pkcs1.der', 'der-private-key'],
    ['a SEC1 DER key', 'ec-sec1.der', 'der-private-key'],
    ['an encrypted PKCS#8 DER key', 'client-encrypted.der', 'der-encrypted-private-key'],
    ['a PFX (AES)', 'client.pfx', 'pfx'],
    ['a legacy PFX (RC2, 3DES)', 'client-legacy.pfx', 'pfx'],
    ['a PFX with an empty password', 'no-password.pfx', 'pfx'],
  ])('accepts %s in both at once', async (_label, file, kind) => {
    await accepted(KEY_SLOTS, file, kind);
  });
});

const NOT_A_CERTIFICATE = [
  ['a PEM private key', 'client.key'],
  ['a DER private key', 'client.key.der'],
  ['a PFX', 'client.pfx'],
  ['a PEM certificate request', 'client.csr'],
  ['a DER certificate request', 'client.csr.der'],
  ['a PEM public key', 'client.pub'],
  ['a key under a CERTIFICATE label', 'key-labelled-certificate.pem'],
  ['a truncated DER certificate', 'truncated.der'],
  ['an empty file', 'empty.pem'],
  ['a text file', 'notes.txt'],
] as const;

const NOT_A_KEY = [
  ['a PEM certificate', 'ca.pem'],
  ['a DER certificate', 'ca.der'],
  ['a PEM certificate request', 'client.csr'],
  ['a PEM public key', 'client.pub'],
  ['a DER public key', 'client.pub.der'],
  ['a certificate under a PRIVATE KEY label', 'certificate-labelled-key.pem'],
  ['a truncated PFX', 'truncated.pfx'],
  ['an empty file', 'empty.pem'],
  ['a text file', 'notes.txt'],
] as const;

/** Every other slot gets a good file before the wrong one: the 400 must name the wrong part, and nothing is stored. */
async function refused(slot: string, file: string, sentence: string): Promise<void> {
  await sim.reset();
  const others = [...CERT_SLOTS, ...KEY_SLOTS]
    .filter((s) => s !== slot)
    .map((s) => [s, CERT_SLOTS.includes(s as never) ? 'ca.pem' : 'client.key'] as const);
  const answer = await upload([...others, [slot, file]]);
  expect(answer).toEqual({ status: 400, body: { success: false, error: sentence } });
  expect(sim.state().files).toEqual([]);
}

describe('a file of the wrong kind gets 400 naming the part', () => {
  describe.each(CERT_SLOTS)('in %s', (slot) => {
    it.each(NOT_A_CERTIFICATE)('refuses %s', async (_label, file) => {
      await refused(slot, file, `Part "${slot}" must be a certificate (PEM or DER); "${file}" is not one.`);
    });
  });

  describe.each(KEY_SLOTS)('in %s', (slot) => {
    it.each(NOT_A_KEY)('refuses %s', async (_label, file) => {
      await refused(slot, file, `Part "${slot}" must be a private key (PEM, DER or PFX); "${file}" is not one.`);
    });
  });
});

describe('the kind decides what the device later takes', () => {
  it('lets a TLS stanza leave out wpa_client_cert only when the key uploaded is a PFX', async () => {
    await sim.reset();
    expect(
      (
        await upload([
          ['wpa_ca_cert', 'ca.pem'],
          ['wpa_private_key', 'client.pfx'],
        ])
      ).status,
    ).toBe(200);
    expect((await upload([['wpa_private_key', 'client.key']])).status).toBe(200);
    const stanza = (key: string) =>
      JSON.stringify({
        name: 'eth1',
        family: 'inet',
        method: 'dhcp',
        wpa_key_mgmt: 'IEEE8021X',
        wpa_eap: 'TLS',
        wpa_identity: 'mp01',
        wpa_ca_cert: 'ca.pem',
        wpa_private_key: key,
        wpa_private_key_passwd: PFX_PASSWORD,
      });
    const post = (key: string) =>
      curl([
        ...auth,
        '-X',
        'POST',
        '-H',
        'Content-Type: application/json',
        '-d',
        stanza(key),
        `${sim.apiUrl}/interface/`,
      ]);
    expect((await post('client.pfx')).status).toBe(200);
    const pemKey = await post('client.key');
    expect(pemKey.status).toBe(400);
    expect(JSON.parse(pemKey.body)).toHaveProperty(
      'error',
      'Field "wpa_client_cert" is required with EAP type "TLS" unless "wpa_private_key" is a PFX file.',
    );
  });
});
