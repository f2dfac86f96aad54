import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPrivateKey, readCertificates } from '../../src/simulator/credential-reader.js';
import { openPfx } from '../../src/simulator/pfx-reader.js';
import { KEY_PASSWORD, PFX_PASSWORD, useLabPki } from '../support/lab-pki.js';

/**
 * How the model 802.1X backend's supplicant opens its files (the simulator's own PEM, DER and
 * PKCS#12 reading), with files openssl wrote: the key must open with the right password only, and
 * be the key of the certificate the file carries.
 */

const run = promisify(execFile);
const pki = useLabPki();
let client: X509Certificate;
const UNICODE_PASSWORD = 'pässwörd-ключ';

beforeAll(async () => {
  const openssl = (...args: string[]) => run('openssl', args, { cwd: pki.dir });
  await Promise.all([
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
      'empty-password.pfx',
    ),
    openssl(
      'pkcs12',
      '-export',
      '-in',
      'client.pem',
      '-inkey',
      'client.key',
      '-certfile',
      'ca.pem',
      '-passout',
      `pass:${UNICODE_PASSWORD}`,
      '-out',
      'unicode.pfx',
    ),
    openssl(
      'pkcs12',
      '-export',
      '-legacy',
      '-in',
      'client.pem',
      '-inkey',
      'client.key',
      '-certfile',
      'ca.pem',
      '-passout',
      `pass:${UNICODE_PASSWORD}`,
      '-out',
      'unicode-legacy.pfx',
    ),
    openssl(
      'pkcs12',
      '-export',
      '-in',
      'client.pem',
      '-inkey',
      'client.key',
      '-certfile',
      'ca.pem',
      '-passout',
      `pass:${PFX_PASSWORD}`,
      '-nomac',
      '-out',
      'no-mac.pfx',
    ),
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
  ]);
  client = new X509Certificate(pki.read('client.pem'));
});

describe('a PFX', () => {
  it.each([
    ['AES (OpenSSL 3 default)', 'client.pfx', PFX_PASSWORD],
    ['legacy RC2 and 3DES', 'client-legacy.pfx', PFX_PASSWORD],
    ['AES with a password beyond ASCII', 'unicode.pfx', UNICODE_PASSWORD],
    ['legacy with a password beyond ASCII', 'unicode-legacy.pfx', UNICODE_PASSWORD],
    ['without a MAC', 'no-mac.pfx', PFX_PASSWORD],
  ])(
    '%s opens with its password: the key of the client certificate, and the certificates in file order',
    (_label, file, password) => {
      const opened = openPrivateKey(pki.read(file), password);
      expect(opened).toBeDefined();
      expect(client.checkPrivateKey(opened!.key)).toBe(true);
      expect(opened!.certificates.map((c) => c.subject)).toEqual(['CN=client.lab.test', 'CN=Lab Root CA']);
    },
  );

  it.each([
    ['client.pfx', 'wrong-password'],
    ['client-legacy.pfx', 'wrong-password'],
    ['unicode.pfx', 'pässwörd'],
  ])('%s does not open with a wrong password (its MAC says so)', (file, password) => {
    expect(openPfx(pki.read(file), password)).toBe('wrong-password');
    expect(openPrivateKey(pki.read(file), password)).toBeUndefined();
  });

  it('does not open without the password it needs', () => {
    expect(openPfx(pki.read('client.pfx'), undefined)).toBe('wrong-password');
  });

  it('opens with no password given when it was written with an empty one, as OpenSSL tries both', () => {
    const bytes = pki.read('empty-password.pfx');
    expect(client.checkPrivateKey(openPrivateKey(bytes, undefined)!.key)).toBe(true);
    expect(client.checkPrivateKey(openPrivateKey(bytes, '')!.key)).toBe(true);
  });

  it('is unreadable when cut short', () => {
    const bytes = pki.read('client.pfx');
    expect(openPfx(bytes.subarray(0, bytes.length - 20), PFX_PASSWORD)).toBe('unreadable');
  });
});

describe('PEM and DER keys', () => {
  it.each([
    ['a PEM key', 'client.key', undefined],
    ['a DER key', 'client.key.der', undefined],
    ['an encrypted PEM key with its password', 'client-encrypted.key', KEY_PASSWORD],
    ['an encrypted DER key with its password', 'client-encrypted.der', KEY_PASSWORD],
  ])('%s opens', (_label, file, password) => {
    const opened = openPrivateKey(pki.read(file), password);
    expect(client.checkPrivateKey(opened!.key)).toBe(true);
    expect(opened!.certificates).toEqual([]);
  });

  it.each([
    ['client-encrypted.key', undefined],
    ['client-encrypted.key', 'wrong'],
    ['client-encrypted.der', undefined],
    ['client-encrypted.der', 'wrong'],
  ])('%s does not open with password %s', (file, password) => {
    expect(openPrivateKey(pki.read(file), password)).toBeUndefined();
  });

  it('a certificate is no key', () => {
    expect(openPrivateKey(pki.read('client.pem'), undefined)).toBeUndefined();
  });
});

describe('certificates', () => {
  it('reads every certificate of a PEM file and the one of a DER file', () => {
    const chain = Buffer.concat([pki.read('client.pem'), pki.read('ca.pem')]);
    expect(readCertificates(chain).map((c) => c.subject)).toEqual(['CN=client.lab.test', 'CN=Lab Root CA']);
    expect(readCertificates(pki.read('ca.der')).map((c) => c.subject)).toEqual(['CN=Lab Root CA']);
  });

  it('reads none from a key', () => {
    expect(readCertificates(pki.read('client.key'))).toEqual([]);
  });
});
