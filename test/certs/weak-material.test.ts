import { beforeAll, describe, expect, it } from 'vitest';
import { checkCredentialSet } from '../../src/certs/index.js';
import { at, credentialSet } from './credential-sets.js';
import { type Issued, usePki } from '../support/test-pki.js';

/** Weak certificates and keys, made with real openssl: small RSA keys, SHA-1 and MD5 signatures, a CA placed before the leaf. */

const pki = usePki();
let radiusCa: Issued;

const problemsOf = (files: { ca?: string; cert?: string; key?: string }) =>
  checkCredentialSet(credentialSet(pki, files), { now: pki.date(1) }).problems.map((p) => ({
    severity: p.severity,
    path: p.path,
    message: p.message,
    hint: p.hint,
  }));

/** A client certificate signed with `digest` by the radius CA, valid from now for 400 days. */
function signedWith(name: string, digest: string): void {
  pki.key(`${name}.key`);
  pki.write(`${name}.ext`, '[ext]\nbasicConstraints = CA:FALSE\nextendedKeyUsage = clientAuth\n');
  pki.openssl([
    'req',
    '-new',
    '-key',
    pki.path(`${name}.key`),
    '-subj',
    `/O=mpprov TEST ONLY/CN=${name}`,
    '-config',
    pki.path('ca.cnf'),
    '-out',
    pki.path(`${name}.csr`),
  ]);
  pki.openssl([
    'x509',
    '-req',
    '-in',
    pki.path(`${name}.csr`),
    '-CA',
    radiusCa.cert,
    '-CAkey',
    radiusCa.key,
    `-${digest}`,
    '-days',
    '400',
    '-set_serial',
    '7',
    '-extfile',
    pki.path(`${name}.ext`),
    '-extensions',
    'ext',
    '-out',
    pki.path(`${name}.pem`),
  ]);
}

beforeAll(() => {
  radiusCa = pki.ca('radius-ca', 'Test radius CA');
  for (const bits of [1024, 512]) {
    pki.openssl([
      'genpkey',
      '-algorithm',
      'RSA',
      '-pkeyopt',
      `rsa_keygen_bits:${bits}`,
      '-out',
      pki.path(`rsa${bits}.key`),
    ]);
    pki.issue(`rsa${bits}`, `rsa${bits} client`, radiusCa, 'client', { key: pki.path(`rsa${bits}.key`) });
  }
  signedWith('sha1', 'sha1');
  signedWith('md5', 'md5');
  signedWith('sha256', 'sha256');
  pki.write('ca-first.pem', Buffer.concat([pki.read('radius-ca.pem'), pki.read('sha256.pem')]));
});

describe('weak material', () => {
  it('an RSA key under 2048 bits is a warning, under 1024 an error', () => {
    const hint = 'issue a new certificate with an RSA key of at least 2048 bits, or an EC key on P-256';
    expect(problemsOf({ ca: 'radius-ca.pem', cert: 'rsa1024.pem', key: 'rsa1024.key' })).toEqual([
      {
        severity: 'warning',
        path: at('client_cert'),
        message: 'certs/rsa1024.pem has an RSA key of 1024 bits, under the 2048 bits current TLS stacks require',
        hint,
      },
    ]);
    expect(problemsOf({ ca: 'radius-ca.pem', cert: 'rsa512.pem', key: 'rsa512.key' })).toEqual([
      {
        severity: 'error',
        path: at('client_cert'),
        message: 'certs/rsa512.pem has an RSA key of 512 bits, which no current TLS stack accepts',
        hint,
      },
    ]);
  });

  it('a certificate signed with SHA-1 is a warning, with MD5 an error; SHA-256 says nothing', () => {
    const hint = 'ask its CA to issue it again signed with SHA-256';
    expect(problemsOf({ ca: 'radius-ca.pem', cert: 'sha1.pem', key: 'sha1.key' })).toEqual([
      {
        severity: 'warning',
        path: at('client_cert'),
        message:
          'certs/sha1.pem is signed with SHA-1, which is no longer collision-resistant; many RADIUS servers and TLS stacks refuse it',
        hint,
      },
    ]);
    expect(problemsOf({ ca: 'radius-ca.pem', cert: 'md5.pem', key: 'md5.key' })).toEqual([
      {
        severity: 'error',
        path: at('client_cert'),
        message: 'certs/md5.pem is signed with MD5, which lets anyone forge such a certificate',
        hint,
      },
    ]);
    expect(problemsOf({ ca: 'radius-ca.pem', cert: 'sha256.pem', key: 'sha256.key' })).toEqual([]);
  });

  it('a client certificate file with the CA first says so, instead of "the key does not match"', () => {
    expect(problemsOf({ ca: 'radius-ca.pem', cert: 'ca-first.pem', key: 'sha256.key' })).toEqual([
      {
        severity: 'error',
        path: at('client_cert'),
        message:
          'certs/ca-first.pem holds the client certificate as certificate 2, after a CA certificate ("Test radius CA"); the client certificate must come first',
        hint: 'put the client certificate first in certs/ca-first.pem, then the CA certificates that issued it',
      },
    ]);
  });
});
