import { createHash, X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KeyPath } from '../../src/core/problem.js';
import { type CredentialSet, checkCredentialSet } from '../../src/certs/index.js';
import { DOT1X, INNER, at, credentialSet } from './credential-sets.js';
import { type Issued, usePki } from '../support/test-pki.js';

const PFX_PASSWORD = 'pfx-Secret-4711';
const KEY_PASSWORD = 'key-Secret-0815';

const pki = usePki();
let radiusCa: Issued;

function set(
  ca: string | undefined,
  cert: string | undefined,
  key: string | undefined,
  password?: string,
  base: KeyPath = DOT1X,
): CredentialSet {
  return credentialSet(pki, { ca, cert, key, password }, base);
}

const check = (s: CredentialSet, options: { expiryWarningDays?: number } = {}) =>
  checkCredentialSet(s, { now: pki.reference, ...options });
const problemsOf = (s: CredentialSet) => check(s).problems;

function pfx(out: string, pair: Issued, extra: string[] = []): void {
  pki.openssl([
    'pkcs12',
    '-export',
    '-in',
    pair.cert,
    '-inkey',
    pair.key,
    ...extra,
    '-passout',
    `pass:${PFX_PASSWORD}`,
    '-out',
    pki.path(out),
  ]);
}

beforeAll(() => {
  radiusCa = pki.ca('radius-ca', 'Test radius CA');
  const rsa = pki.issue('rsa', 'rsa client', radiusCa, 'client');
  pki.issue('p256', 'p256 client', radiusCa, 'client', { algorithm: 'p256' });
  pki.issue('p384', 'p384 client', radiusCa, 'client', { algorithm: 'p384' });
  pfx('rsa.p12', rsa);
  pfx('rsa-legacy.p12', rsa, ['-legacy']);
  pki.openssl([
    'pkcs8',
    '-topk8',
    '-v2',
    'aes-256-cbc',
    '-in',
    rsa.key,
    '-passout',
    `pass:${KEY_PASSWORD}`,
    '-out',
    pki.path('rsa-enc.key'),
  ]);
  pki.openssl([
    'pkey',
    '-in',
    pki.path('p256.key'),
    '-traditional',
    '-aes-128-cbc',
    '-passout',
    `pass:${KEY_PASSWORD}`,
    '-out',
    pki.path('p256-trad.key'),
  ]);
  pki.openssl(['pkcs8', '-topk8', '-nocrypt', '-in', rsa.key, '-outform', 'DER', '-out', pki.path('rsa-key.der')]);
});

describe('checkCredentialSet: sets that are fine', () => {
  it('passes an RSA set and records each file with its kind and SHA-256', () => {
    const result = check(set('radius-ca.pem', 'rsa.pem', 'rsa.key'));
    const sha = (name: string): string => createHash('sha256').update(pki.read(name)).digest('hex');
    const leaf = new X509Certificate(pki.read('rsa.pem'));
    const ca = new X509Certificate(pki.read('radius-ca.pem'));
    const commonName = (subject: string) =>
      subject
        .split('\n')
        .find((l) => l.startsWith('CN='))
        ?.slice(3);
    const leafValidity = {
      notBefore: new Date(leaf.validFrom).toISOString(),
      notAfter: new Date(leaf.validTo).toISOString(),
    };
    expect(result).toEqual({
      problems: [],
      files: [
        { keyPath: at('ca_cert'), name: 'certs/radius-ca.pem', kind: 'pem-certificate', sha256: sha('radius-ca.pem') },
        { keyPath: at('client_cert'), name: 'certs/rsa.pem', kind: 'pem-certificate', sha256: sha('rsa.pem') },
        { keyPath: at('private_key'), name: 'certs/rsa.key', kind: 'pem-private-key', sha256: sha('rsa.key') },
      ],
      keyHoldsCertificate: false,
      clientCertValidity: { notBefore: leafValidity.notBefore, notAfter: leafValidity.notAfter },
      // The CA the set installs beside its client certificate: judged at the device's clock later.
      otherCertificates: [
        {
          key: 'ca_cert',
          index: 0,
          count: 1,
          commonName: commonName(ca.subject),
          notBefore: new Date(ca.validFrom).toISOString(),
          notAfter: new Date(ca.validTo).toISOString(),
        },
      ],
    });
  });

  it('records the client certificate validity from a PFX key, learnt while it was open', () => {
    const pfx = check(set('radius-ca.pem', undefined, 'rsa.p12', PFX_PASSWORD));
    expect(pfx.keyHoldsCertificate).toBe(true);
    const leaf = new X509Certificate(pki.read('rsa.pem'));
    expect(pfx.clientCertValidity).toEqual({
      notBefore: new Date(leaf.validFrom).toISOString(),
      notAfter: new Date(leaf.validTo).toISOString(),
    });
  });

  it('passes EC P-256 and P-384 sets and a DER key', () => {
    expect(problemsOf(set('radius-ca.pem', 'p256.pem', 'p256.key'))).toEqual([]);
    expect(problemsOf(set('radius-ca.pem', 'p384.pem', 'p384.key'))).toEqual([]);
    expect(problemsOf(set('radius-ca.pem', 'rsa.pem', 'rsa-key.der'))).toEqual([]);
  });

  it('passes encrypted PKCS#8 and traditional PEM keys with their password', () => {
    expect(problemsOf(set('radius-ca.pem', 'rsa.pem', 'rsa-enc.key', KEY_PASSWORD))).toEqual([]);
    expect(problemsOf(set('radius-ca.pem', 'p256.pem', 'p256-trad.key', KEY_PASSWORD))).toEqual([]);
  });

  it.each(['rsa.p12', 'rsa-legacy.p12'])(
    'takes the client certificate from PFX %s when client_cert is left out',
    (name) => {
      const result = check(set('radius-ca.pem', undefined, name, PFX_PASSWORD));
      expect(result.problems).toEqual([]);
      expect(result.keyHoldsCertificate).toBe(true);
      expect(result.files.map((f) => f.kind)).toEqual(['pem-certificate', 'pfx']);
    },
  );

  it('passes a PFX with an EC key, and a PFX beside a matching client_cert', () => {
    pfx('p256.p12', { key: pki.path('p256.key'), cert: pki.path('p256.pem') });
    expect(check(set('radius-ca.pem', undefined, 'p256.p12', PFX_PASSWORD))).toMatchObject({
      problems: [],
      keyHoldsCertificate: true,
    });
    expect(check(set('radius-ca.pem', 'rsa.pem', 'rsa.p12', PFX_PASSWORD))).toMatchObject({
      problems: [],
      keyHoldsCertificate: true,
    });
  });
});

describe('checkCredentialSet: keys and passwords', () => {
  it('asks for the password of an encrypted key or PFX', () => {
    const hint = "add private_key_password: (or private_key_password_file:) with the key's password";
    expect(problemsOf(set('radius-ca.pem', 'rsa.pem', 'rsa-enc.key'))).toEqual([
      {
        severity: 'error',
        path: at('private_key'),
        message: 'certs/rsa-enc.key is encrypted and needs a password',
        hint,
      },
    ]);
    expect(problemsOf(set('radius-ca.pem', undefined, 'rsa.p12'))).toEqual([
      { severity: 'error', path: at('private_key'), message: 'certs/rsa.p12 is encrypted and needs a password', hint },
    ]);
  });

  it.each([
    ['rsa.p12', undefined],
    ['rsa-legacy.p12', undefined],
    ['rsa-enc.key', 'rsa.pem'],
    ['p256-trad.key', 'p256.pem'],
  ])('says the password of %s is wrong, at private_key_password', (key, cert) => {
    expect(problemsOf(set('radius-ca.pem', cert, key, 'not-the-password'))).toEqual([
      {
        severity: 'error',
        path: at('private_key_password'),
        message: `private_key_password is the wrong password for certs/${key}`,
        hint: `give the password certs/${key} was exported with`,
      },
    ]);
  });

  it('warns that a password given for an unencrypted PEM or DER key is ignored', () => {
    for (const key of ['rsa.key', 'rsa-key.der']) {
      expect(problemsOf(set('radius-ca.pem', 'rsa.pem', key, KEY_PASSWORD))).toEqual([
        {
          severity: 'warning',
          path: at('private_key_password'),
          message: `certs/${key} is not encrypted, so private_key_password is ignored`,
          hint: 'remove private_key_password',
        },
      ]);
    }
  });

  it('finds a key that does not match the client certificate', () => {
    expect(problemsOf(set('radius-ca.pem', 'rsa.pem', 'p256.key'))).toEqual([
      {
        severity: 'error',
        path: at('private_key'),
        message: 'certs/p256.key does not match the client certificate certs/rsa.pem: their public keys differ',
        hint: 'use the key the certificate was issued for, or the certificate issued for this key',
      },
    ]);
  });

  it('finds a client_cert that differs from the certificate inside the PFX', () => {
    expect(problemsOf(set('radius-ca.pem', 'p256.pem', 'rsa.p12', PFX_PASSWORD))).toEqual([
      {
        severity: 'error',
        path: at('client_cert'),
        message: 'certs/p256.pem differs from the client certificate inside certs/rsa.p12: their public keys differ',
        hint: 'leave out client_cert, since the PFX carries the client certificate, or give the matching one',
      },
    ]);
  });

  it('finds a PFX whose key matches none of its certificates', () => {
    // `-nocerts -certfile` puts a foreign certificate beside the key; plain -export would refuse.
    pki.openssl([
      'pkcs12',
      '-export',
      '-inkey',
      pki.path('rsa.key'),
      '-nocerts',
      '-certfile',
      pki.path('p256.pem'),
      '-passout',
      `pass:${PFX_PASSWORD}`,
      '-out',
      pki.path('foreign.p12'),
    ]);
    expect(check(set('radius-ca.pem', undefined, 'foreign.p12', PFX_PASSWORD))).toMatchObject({
      problems: [
        {
          severity: 'error',
          path: at('private_key'),
          message: 'the private key in certs/foreign.p12 matches none of the certificates in it',
          hint: 'export the PFX again with the certificate and its own key',
        },
      ],
      keyHoldsCertificate: false,
    });
  });

  it('requires client_cert when the key does not carry the certificate', () => {
    expect(problemsOf(set('radius-ca.pem', undefined, 'rsa.key'))).toEqual([
      {
        severity: 'error',
        path: at('private_key'),
        message: 'certs/rsa.key holds no client certificate and client_cert is not given',
        hint: 'add client_cert: with the client certificate, or use a PFX file that holds both key and certificate',
      },
    ]);
  });

  it('names the inner_tls keys of the PEAP second set', () => {
    expect(problemsOf(set('radius-ca.pem', undefined, 'rsa-enc.key', undefined, INNER))).toEqual([
      {
        severity: 'error',
        path: at('private_key', INNER),
        message: 'certs/rsa-enc.key is encrypted and needs a password',
        hint: "add inner_tls.private_key_password: (or inner_tls.private_key_password_file:) with the key's password",
      },
      {
        severity: 'error',
        path: at('private_key', INNER),
        message: 'certs/rsa-enc.key holds no client certificate and inner_tls.client_cert is not given',
        hint: 'add inner_tls.client_cert: with the client certificate, or use a PFX file that holds both key and certificate',
      },
    ]);
  });
});
