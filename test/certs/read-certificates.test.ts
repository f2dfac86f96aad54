import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CredentialKind,
  ReadFailure,
  derTruncation,
  detectCredentialKind,
  isReadError,
  readCertificates,
} from '../../src/certs/index.js';
import { type Issued, usePki } from '../support/test-pki.js';

const pki = usePki();
let ca: Issued;
let leaf: Issued;

beforeAll(() => {
  ca = pki.ca('ca', 'Test CA', { algorithm: 'p256' });
  leaf = pki.issue('leaf', 'leaf', ca, 'client', { algorithm: 'p256' });
  pki.openssl(['x509', '-in', leaf.cert, '-outform', 'DER', '-out', pki.path('leaf.der')]);
});

function fingerprints(bytes: Uint8Array): string[] {
  const certs = readCertificates(bytes);
  if (isReadError(certs)) throw new Error(certs.detail);
  return certs.map((c) => c.fingerprint256);
}

const fingerprintOf = (path: string): string => new X509Certificate(readFileSync(path)).fingerprint256;

describe('readCertificates', () => {
  it('reads every certificate of a PEM bundle in order, skipping other blocks', () => {
    const bundle = Buffer.concat([readFileSync(leaf.key), readFileSync(leaf.cert), readFileSync(ca.cert)]);
    expect(fingerprints(bundle)).toEqual([fingerprintOf(leaf.cert), fingerprintOf(ca.cert)]);
  });

  it('reads a DER certificate and an OpenSSL TRUSTED CERTIFICATE', () => {
    pki.openssl(['x509', '-in', ca.cert, '-trustout', '-addtrust', 'clientAuth', '-out', pki.path('trusted.pem')]);
    expect(fingerprints(pki.read('leaf.der'))).toEqual([fingerprintOf(leaf.cert)]);
    expect(fingerprints(pki.read('trusted.pem'))).toEqual([fingerprintOf(ca.cert)]);
  });

  it('returns an error, never throws, for empty, garbage, truncated and key-only input', () => {
    const der = pki.read('leaf.der');
    const cases: Uint8Array[] = [
      new Uint8Array(0),
      Buffer.from('not a certificate'),
      der.subarray(0, der.length / 2),
      readFileSync(leaf.key),
    ];
    for (const bytes of cases) {
      const result = readCertificates(bytes);
      expect(isReadError(result) ? result.error : 'read').toBe(ReadFailure.Unreadable);
    }
  });
});

describe('detectCredentialKind', () => {
  it('tells each encoding apart by content', () => {
    pki.openssl(['pkcs8', '-topk8', '-nocrypt', '-in', leaf.key, '-outform', 'DER', '-out', pki.path('key.der')]);
    pki.openssl([
      'pkcs8',
      '-topk8',
      '-v2',
      'aes-256-cbc',
      '-in',
      leaf.key,
      '-passout',
      'pass:x',
      '-outform',
      'DER',
      '-out',
      pki.path('key-enc.der'),
    ]);
    pki.openssl([
      'pkcs12',
      '-export',
      '-in',
      leaf.cert,
      '-inkey',
      leaf.key,
      '-passout',
      'pass:x',
      '-out',
      pki.path('leaf.p12'),
    ]);
    pki.openssl([
      'req',
      '-new',
      '-key',
      leaf.key,
      '-subj',
      '/CN=request',
      '-config',
      pki.path('ca.cnf'),
      '-out',
      pki.path('req.pem'),
    ]);
    pki.openssl(['req', '-in', pki.path('req.pem'), '-outform', 'DER', '-out', pki.path('req.der')]);
    pki.openssl(['pkey', '-in', leaf.key, '-pubout', '-out', pki.path('pub.pem')]);
    pki.openssl(['pkey', '-in', leaf.key, '-pubout', '-outform', 'DER', '-out', pki.path('pub.der')]);
    const kinds = Object.fromEntries(
      [
        'leaf.pem',
        'leaf.der',
        'leaf.key',
        'key.der',
        'key-enc.der',
        'leaf.p12',
        'req.pem',
        'req.der',
        'pub.pem',
        'pub.der',
      ].map((f) => [f, detectCredentialKind(pki.read(f))]),
    );
    expect(kinds).toEqual({
      'leaf.pem': CredentialKind.PemCertificate,
      'leaf.der': CredentialKind.DerCertificate,
      'leaf.key': CredentialKind.PemPrivateKey,
      'key.der': CredentialKind.DerPrivateKey,
      'key-enc.der': CredentialKind.DerEncryptedPrivateKey,
      'leaf.p12': CredentialKind.Pfx,
      'req.pem': CredentialKind.CertificateRequest,
      'req.der': CredentialKind.CertificateRequest,
      'pub.pem': CredentialKind.PublicKey,
      'pub.der': CredentialKind.PublicKey,
    });
  });

  it('measures how much of a truncated DER file is missing', () => {
    const der = pki.read('leaf.der');
    expect(derTruncation(der.subarray(0, 100))).toEqual({ declared: der.length, actual: 100 });
    expect(derTruncation(der)).toBeUndefined();
    expect(derTruncation(Buffer.from('-----BEGIN CERTIFICATE-----'))).toBeUndefined();
  });
});
