import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type CredentialFile, type CredentialSet, checkCredentialSet } from '../../src/certs/index.js';
import { Secret } from '../../src/core/index.js';
import { at } from './credential-sets.js';

/** The committed bad files of test/fixtures/certs; their dates are absolute, so no clock is pinned. */
const FIXTURES = fileURLToPath(new URL('../fixtures/certs/', import.meta.url));
const PASSWORD = 'fixture-password';

function fixture(name: string, key: string): CredentialFile {
  return { name: `certs/${name}`, bytes: new Uint8Array(readFileSync(`${FIXTURES}${name}`)), keyPath: at(key) };
}

function problemsOf(files: { ca?: string; cert?: string; key?: string; password?: string }) {
  const set: CredentialSet = {};
  if (files.ca) set.caCert = fixture(files.ca, 'ca_cert');
  if (files.cert) set.clientCert = fixture(files.cert, 'client_cert');
  if (files.key) set.privateKey = fixture(files.key, 'private_key');
  if (files.password)
    set.privateKeyPassword = { value: new Secret(files.password), keyPath: at('private_key_password') };
  return checkCredentialSet(set).problems;
}

const error = (key: string, message: string, hint: string) => ({ severity: 'error', path: at(key), message, hint });
const CERT_HINT = 'point client_cert: at a certificate file (PEM or DER)';
const KEY_HINT = 'point private_key: at a private key file (PEM, DER or PFX)';
const MISMATCH_HINT = 'use the key the certificate was issued for, or the certificate issued for this key';

describe('static credential fixtures', () => {
  it('the good set they are made from passes', () => {
    expect(problemsOf({ ca: 'fixture-ca.pem', cert: 'client-cert.pem', key: 'client-key.pem' })).toEqual([]);
  });

  it('empty, garbage, truncated and damaged files', () => {
    const declared = new X509Certificate(readFileSync(`${FIXTURES}client-cert.pem`)).raw.length;
    expect(problemsOf({ cert: 'client-cert.pem', key: 'empty.pem' })).toEqual([
      error(
        'private_key',
        'certs/empty.pem is empty, but private_key needs a private key',
        'copy the file onto the stick again',
      ),
    ]);
    expect(problemsOf({ ca: 'garbage.pem' })).toEqual([
      error(
        'ca_cert',
        'certs/garbage.pem is not a certificate or key in PEM, DER or PFX form, but ca_cert needs a certificate',
        'point ca_cert: at a certificate file (PEM or DER)',
      ),
    ]);
    expect(problemsOf({ cert: 'client-cert.pem', key: 'garbage.bin' })).toEqual([
      error(
        'private_key',
        'certs/garbage.bin is not a certificate or key in PEM, DER or PFX form, but private_key needs a private key',
        KEY_HINT,
      ),
    ]);
    expect(problemsOf({ cert: 'truncated.der', key: 'client-key.pem' })).toEqual([
      error(
        'client_cert',
        `certs/truncated.der is truncated: it declares ${declared} bytes but holds 200`,
        'copy the file onto the stick again from its source',
      ),
    ]);
    expect(problemsOf({ cert: 'damaged-base64.pem', key: 'client-key.pem' })).toEqual([
      error(
        'client_cert',
        'certs/damaged-base64.pem looks like a certificate but cannot be read; it may be damaged',
        'copy the file again, or export the certificate again from its source',
      ),
    ]);
  });

  it('the right content in the wrong slot, whatever the file is called', () => {
    expect(problemsOf({ cert: 'key-in-cert-slot.crt', key: 'client-key.pem' })).toEqual([
      error(
        'client_cert',
        'certs/key-in-cert-slot.crt holds a private key, but client_cert needs a certificate',
        `${CERT_HINT}; keys and PFX files belong in private_key`,
      ),
    ]);
    expect(problemsOf({ cert: 'client-cert.pem', key: 'cert-in-key-slot.key' })).toEqual([
      error(
        'private_key',
        'certs/cert-in-key-slot.key holds a certificate, but private_key needs a private key',
        `${KEY_HINT}; certificates belong in client_cert or ca_cert`,
      ),
    ]);
    expect(problemsOf({ cert: 'request.csr', key: 'client-key.pem' })).toEqual([
      error(
        'client_cert',
        'certs/request.csr holds a certificate request (CSR), but client_cert needs a certificate',
        `a CSR is only a request: ${CERT_HINT}`,
      ),
    ]);
    expect(problemsOf({ cert: 'client-cert.pem', key: 'public-key.pem' })).toEqual([
      error('private_key', 'certs/public-key.pem holds a public key, but private_key needs a private key', KEY_HINT),
    ]);
  });

  it('an expired certificate stays expired, a future one stays not yet valid', () => {
    const renew = 'renew the certificate, or replace it with a current one';
    expect(problemsOf({ ca: 'fixture-ca.pem', cert: 'expired-rsa-cert.pem', key: 'expired-rsa-key.pem' })).toEqual([
      error('client_cert', 'certs/expired-rsa-cert.pem expired on 2001-01-01', renew),
    ]);
    expect(problemsOf({ cert: 'not-yet-valid.pem' })).toEqual([
      error(
        'client_cert',
        'certs/not-yet-valid.pem is not valid until 2090-01-01',
        'check the clock of the machine that issued it; the Monitoring Point refuses it before that date',
      ),
    ]);
  });

  it('unsupported key types, unrelated keys and a leaf where a CA belongs', () => {
    const unsupported = 'use an RSA key or an EC key on curve P-256 or P-384';
    const mismatch = (key: string) =>
      error(
        'private_key',
        `certs/${key} does not match the client certificate certs/client-cert.pem: their public keys differ`,
        MISMATCH_HINT,
      );
    expect(problemsOf({ cert: 'client-cert.pem', key: 'ed25519-key.pem' })).toEqual([
      error(
        'private_key',
        'certs/ed25519-key.pem holds an Ed25519 key, which the Monitoring Point does not support',
        unsupported,
      ),
      mismatch('ed25519-key.pem'),
    ]);
    expect(problemsOf({ cert: 'client-cert.pem', key: 'p521-key.pem' })).toEqual([
      error(
        'private_key',
        'certs/p521-key.pem holds an EC key on curve P-521, which the Monitoring Point does not support',
        unsupported,
      ),
      mismatch('p521-key.pem'),
    ]);
    expect(problemsOf({ cert: 'client-cert.pem', key: 'unrelated-key.pem' })).toEqual([mismatch('unrelated-key.pem')]);
    expect(problemsOf({ ca: 'not-a-ca.pem', cert: 'client-cert.pem', key: 'client-key.pem' })).toEqual([
      error(
        'ca_cert',
        'certs/not-a-ca.pem is not a CA certificate (no basicConstraints CA:TRUE), but ca_cert needs one',
        "point ca_cert: at the certificate of the CA that issued the RADIUS server's certificate",
      ),
      {
        severity: 'warning',
        path: at('client_cert'),
        message: 'certs/client-cert.pem was not issued by the CA in ca_cert (certs/not-a-ca.pem)',
        hint: 'fine if the RADIUS server trusts its issuer "mpprov TEST fixture CA" for client certificates; otherwise use one from the CA in ca_cert',
      },
    ]);
  });

  it('traditional and legacy PBES1 encrypted keys, and a PFX without a key', () => {
    for (const key of ['client-key-traditional.pem', 'client-key-pbes1.pem']) {
      expect(problemsOf({ ca: 'fixture-ca.pem', cert: 'client-cert.pem', key, password: PASSWORD })).toEqual([]);
      expect(problemsOf({ ca: 'fixture-ca.pem', cert: 'client-cert.pem', key })).toEqual([
        error(
          'private_key',
          `certs/${key} is encrypted and needs a password`,
          "add private_key_password: (or private_key_password_file:) with the key's password",
        ),
      ]);
    }
    expect(problemsOf({ ca: 'fixture-ca.pem', key: 'no-key.p12', password: PASSWORD })).toEqual([
      error(
        'private_key',
        'certs/no-key.p12 is a PFX file without a private key',
        'export the PFX again with its private key',
      ),
    ]);
  });
});
