import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  type CredentialFile,
  type CredentialSet,
  checkCredentialSet,
  checkTrustAnchor,
} from '../../src/certs/index.js';
import { Secret } from '../../src/core/index.js';
import type { KeyPath } from '../../src/core/problem.js';
import { DOT1X, INNER, at } from './credential-sets.js';

/**
 * The committed test PKI of profiles/certs (scripts/make-test-pki.sh) must keep passing the checks
 * the example profiles rely on. It is checked against the real clock on purpose: a failure here
 * means the 20-year validity ran out and the script must be rerun.
 */
const PROFILE_CERTS = fileURLToPath(new URL('../../profiles/certs/', import.meta.url));
const read = (name: string, keyPath: KeyPath): CredentialFile => ({
  name: `certs/${name}`,
  bytes: new Uint8Array(readFileSync(`${PROFILE_CERTS}${name}`)),
  keyPath,
});

function set(files: { cert?: string; key: string; password?: string }, base: KeyPath = DOT1X): CredentialSet {
  const result: CredentialSet = {
    caCert: read('client-ca.pem', at('ca_cert', base)),
    privateKey: read(files.key, at('private_key', base)),
  };
  if (files.cert !== undefined) result.clientCert = read(files.cert, at('client_cert', base));
  if (files.password !== undefined)
    result.privateKeyPassword = { value: new Secret(files.password), keyPath: at('private_key_password', base) };
  return result;
}

describe('profiles/certs', () => {
  it.each([
    { cert: 'mp01-cert.pem', key: 'mp01-key.pem' },
    { cert: 'mp01-cert.der', key: 'mp01-key.der' },
    { cert: 'mp01-cert.pem', key: 'mp01-key-encrypted.pem', password: 'test-key-password' },
    { key: 'mp01.p12', password: 'test-pfx-password' },
    { key: 'mp01-legacy.p12', password: 'test-pfx-password' },
    { cert: 'mp01-ec-cert.pem', key: 'mp01-ec-key.pem' },
  ])('$key passes with ca_cert client-ca.pem', (files) => {
    const result = checkCredentialSet(set(files));
    expect(result.problems).toEqual([]);
    expect(result.keyHoldsCertificate).toBe(files.cert === undefined);
  });

  it('passes the PEAP inner set', () => {
    expect(checkCredentialSet(set({ cert: 'mp01-inner-cert.pem', key: 'mp01-inner-key.pem' }, INNER)).problems).toEqual(
      [],
    );
  });

  it('warns, as the spec says, when ca_cert is the RADIUS CA that did not issue the client certificate', () => {
    const mixed: CredentialSet = {
      ...set({ cert: 'mp01-cert.pem', key: 'mp01-key.pem' }),
      caCert: read('radius-ca.pem', at('ca_cert')),
    };
    expect(checkCredentialSet(mixed).problems).toEqual([
      {
        severity: 'warning',
        path: at('client_cert'),
        message: 'certs/mp01-cert.pem was not issued by the CA in ca_cert (certs/radius-ca.pem)',
        hint: 'fine if the RADIUS server trusts its issuer "mpprov TEST client CA" for client certificates; otherwise use one from the CA in ca_cert',
      },
    ]);
  });

  it('trusts device-ca.pem for HTTPS, and the device certificate chains to it', () => {
    expect(checkTrustAnchor(read('device-ca.pem', ['monitoring_points', 0, 'tls', 'ca'])).problems).toEqual([]);
    const result = checkCredentialSet({
      caCert: read('device-ca.pem', at('ca_cert')),
      clientCert: read('device-https-cert.pem', at('client_cert')),
      privateKey: read('device-https-key.pem', at('private_key')),
    });
    // serverAuth only: the one expected finding is the missing clientAuth.
    expect(result.problems).toEqual([
      {
        severity: 'warning',
        path: at('client_cert'),
        message:
          'certs/device-https-cert.pem is not meant for client authentication: its extended key usage lacks clientAuth',
        hint: 'many RADIUS servers refuse it; ask for a client certificate with extended key usage clientAuth',
      },
    ]);
  });
});
