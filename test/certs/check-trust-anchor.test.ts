import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { type CredentialFile, checkTrustAnchor } from '../../src/certs/index.js';
import type { KeyPath } from '../../src/core/problem.js';
import { usePki, isoDay } from '../support/test-pki.js';

const TLS_CA: KeyPath = ['monitoring_points', 0, 'tls', 'ca'];
const FIXTURES = fileURLToPath(new URL('../fixtures/certs/', import.meta.url));
const NOT_CA_HINT =
  "point tls.ca: at the certificate of the CA that issued the device's HTTPS certificate, or pin the device with fingerprint_sha256:";

const pki = usePki();
beforeAll(() => {
  pki.ca('device-ca', 'Test device CA', { algorithm: 'p256' });
  pki.ca('second-ca', 'Second CA', { algorithm: 'p256' });
  pki.ca('old-ca', 'Old CA', { algorithm: 'p256', startDays: -900, endDays: -30 });
});

const generated = (name: string): CredentialFile => ({ name: `certs/${name}`, bytes: pki.read(name), keyPath: TLS_CA });
const fixture = (name: string): CredentialFile => ({
  name: `certs/${name}`,
  bytes: new Uint8Array(readFileSync(`${FIXTURES}${name}`)),
  keyPath: TLS_CA,
});
const check = (file: CredentialFile) => checkTrustAnchor(file, { now: pki.reference }).problems;

describe('checkTrustAnchor', () => {
  it('accepts a CA certificate in PEM or DER, and a bundle of several', () => {
    pki.openssl(['x509', '-in', pki.path('device-ca.pem'), '-outform', 'DER', '-out', pki.path('device-ca.der')]);
    pki.write('bundle.pem', Buffer.concat([pki.read('device-ca.pem'), pki.read('second-ca.pem')]));
    expect(check(generated('device-ca.pem'))).toEqual([]);
    expect(check(generated('device-ca.der'))).toEqual([]);
    expect(check(generated('bundle.pem'))).toEqual([]);
  });

  it('refuses an expired CA', () => {
    expect(check(generated('old-ca.pem'))).toEqual([
      {
        severity: 'error',
        path: TLS_CA,
        message: `certs/old-ca.pem expired on ${isoDay(pki.date(-30))}`,
        hint: 'renew the certificate, or replace it with a current one',
      },
    ]);
  });

  it('refuses a certificate that is not a CA, naming it inside a bundle', () => {
    expect(check(fixture('not-a-ca.pem'))).toEqual([
      {
        severity: 'error',
        path: TLS_CA,
        message: 'certs/not-a-ca.pem is not a CA certificate (no basicConstraints CA:TRUE), but tls.ca needs one',
        hint: NOT_CA_HINT,
      },
    ]);
    const bundle = Buffer.concat([pki.read('device-ca.pem'), readFileSync(`${FIXTURES}expired-rsa-cert.pem`)]);
    expect(check({ name: 'certs/bundle.pem', bytes: bundle, keyPath: TLS_CA })).toEqual([
      {
        severity: 'error',
        path: TLS_CA,
        message: 'certificate 2 ("fixture expired") in certs/bundle.pem expired on 2001-01-01',
        hint: 'renew the certificate, or replace it with a current one',
      },
      {
        severity: 'error',
        path: TLS_CA,
        message:
          'certificate 2 ("fixture expired") in certs/bundle.pem is not a CA certificate (no basicConstraints CA:TRUE), but tls.ca needs one',
        hint: NOT_CA_HINT,
      },
    ]);
  });

  it('refuses files without a certificate', () => {
    expect(check(fixture('empty.pem'))).toEqual([
      {
        severity: 'error',
        path: TLS_CA,
        message: 'certs/empty.pem is empty, but tls.ca needs a certificate',
        hint: 'copy the file onto the stick again',
      },
    ]);
    expect(check(fixture('client-key.pem'))).toEqual([
      {
        severity: 'error',
        path: TLS_CA,
        message: 'certs/client-key.pem holds a private key, but tls.ca needs a certificate',
        hint: 'point tls.ca: at a certificate file (PEM or DER)',
      },
    ]);
  });
});
