import { beforeAll, describe, expect, it } from 'vitest';
import { type CredentialSet, checkCredentialSet } from '../../src/certs/index.js';
import { at, credentialSet } from './credential-sets.js';
import { type Issued, usePki, isoDay } from '../support/test-pki.js';

const pki = usePki();
let radiusCa: Issued;
let clientCa: Issued;

const check = (s: CredentialSet, options: { expiryWarningDays?: number } = {}) =>
  checkCredentialSet(s, { now: pki.reference, ...options });
const problemsOf = (files: { ca?: string; cert?: string; key?: string; password?: string }) =>
  check(credentialSet(pki, files)).problems;

beforeAll(() => {
  radiusCa = pki.ca('radius-ca', 'Test radius CA', { algorithm: 'p256' });
  clientCa = pki.ca('client-ca', 'Test client CA', { algorithm: 'p256' });
  pki.issue('good', 'good client', radiusCa, 'client', { algorithm: 'p256' });
});

describe('checkCredentialSet: validity dates', () => {
  it('refuses an expired client certificate', () => {
    pki.issue('expired', 'expired client', radiusCa, 'client', { algorithm: 'p256', startDays: -400, endDays: -5 });
    expect(problemsOf({ ca: 'radius-ca.pem', cert: 'expired.pem', key: 'expired.key' })).toEqual([
      {
        severity: 'error',
        path: at('client_cert'),
        message: `certs/expired.pem expired on ${isoDay(pki.date(-5))}`,
        hint: 'renew the certificate, or replace it with a current one',
      },
    ]);
  });

  it('refuses a certificate that is not valid yet', () => {
    pki.issue('future', 'future client', radiusCa, 'client', { algorithm: 'p256', startDays: 5, endDays: 400 });
    expect(problemsOf({ ca: 'radius-ca.pem', cert: 'future.pem', key: 'future.key' })).toEqual([
      {
        severity: 'error',
        path: at('client_cert'),
        message: `certs/future.pem is not valid until ${isoDay(pki.date(5))}`,
        hint: 'check the clock of the machine that issued it; the Monitoring Point refuses it before that date',
      },
    ]);
  });

  it('warns of a certificate that expires within 30 days, and not with a shorter warning period', () => {
    pki.issue('soon', 'soon client', radiusCa, 'client', { algorithm: 'p256', endDays: 10 });
    const files = credentialSet(pki, { ca: 'radius-ca.pem', cert: 'soon.pem', key: 'soon.key' });
    expect(check(files).problems).toEqual([
      {
        severity: 'warning',
        path: at('client_cert'),
        message: `certs/soon.pem expires on ${isoDay(pki.date(10))}, in 10 days`,
        hint: 'renew it before then; it stops working that day',
      },
    ]);
    expect(check(files, { expiryWarningDays: 7 }).problems).toEqual([]);
  });

  it('refuses an expired CA certificate', () => {
    const oldCa = pki.ca('old-ca', 'Old CA', { algorithm: 'p256', startDays: -800, endDays: -1 });
    pki.issue('old-client', 'old client', oldCa, 'client', { algorithm: 'p256' });
    expect(problemsOf({ ca: 'old-ca.pem', cert: 'old-client.pem', key: 'old-client.key' })).toEqual([
      {
        severity: 'error',
        path: at('ca_cert'),
        message: `certs/old-ca.pem expired on ${isoDay(pki.date(-1))}`,
        hint: 'renew the certificate, or replace it with a current one',
      },
    ]);
  });

  it('judges the certificates inside a PFX, naming each by position and common name', () => {
    const expired = pki.issue('pfx-expired', 'pfx client', radiusCa, 'client', {
      algorithm: 'p256',
      startDays: -400,
      endDays: -3,
    });
    const export12 = (out: string, extra: string[]): void => {
      pki.openssl([
        'pkcs12',
        '-export',
        '-in',
        expired.cert,
        '-inkey',
        expired.key,
        ...extra,
        '-passout',
        'pass:x',
        '-out',
        pki.path(out),
      ]);
    };
    export12('alone.p12', []);
    export12('chain.p12', ['-certfile', radiusCa.cert]);
    const hint = 'renew the certificate, or replace it with a current one';
    const day = isoDay(pki.date(-3));
    expect(problemsOf({ ca: 'radius-ca.pem', key: 'alone.p12', password: 'x' })).toEqual([
      {
        severity: 'error',
        path: at('private_key'),
        message: `the certificate in certs/alone.p12 expired on ${day}`,
        hint,
      },
    ]);
    expect(problemsOf({ ca: 'radius-ca.pem', key: 'chain.p12', password: 'x' })).toEqual([
      {
        severity: 'error',
        path: at('private_key'),
        message: `certificate 1 ("pfx client") in certs/chain.p12 expired on ${day}`,
        hint,
      },
    ]);
  });
});

describe('checkCredentialSet: CA and issuer', () => {
  it('refuses a ca_cert that is not a CA', () => {
    expect(problemsOf({ ca: 'good.pem', cert: 'good.pem', key: 'good.key' })).toEqual([
      {
        severity: 'error',
        path: at('ca_cert'),
        message: 'certs/good.pem is not a CA certificate (no basicConstraints CA:TRUE), but ca_cert needs one',
        hint: "point ca_cert: at the certificate of the CA that issued the RADIUS server's certificate",
      },
      {
        severity: 'warning',
        path: at('client_cert'),
        message: 'certs/good.pem was not issued by the CA in ca_cert (certs/good.pem)',
        hint: 'fine if the RADIUS server trusts its issuer "Test radius CA" for client certificates; otherwise use one from the CA in ca_cert',
      },
    ]);
  });

  it('only warns when the client certificate comes from another CA than ca_cert', () => {
    pki.issue('other', 'other client', clientCa, 'client', { algorithm: 'p256' });
    expect(problemsOf({ ca: 'radius-ca.pem', cert: 'other.pem', key: 'other.key' })).toEqual([
      {
        severity: 'warning',
        path: at('client_cert'),
        message: 'certs/other.pem was not issued by the CA in ca_cert (certs/radius-ca.pem)',
        hint: 'fine if the RADIUS server trusts its issuer "Test client CA" for client certificates; otherwise use one from the CA in ca_cert',
      },
    ]);
    // A ca_cert bundle that holds the client's CA as well is fine.
    pki.write('both-cas.pem', Buffer.concat([pki.read('radius-ca.pem'), pki.read('client-ca.pem')]));
    expect(problemsOf({ ca: 'both-cas.pem', cert: 'other.pem', key: 'other.key' })).toEqual([]);
  });

  it('checks the signature, not only the issuer name', () => {
    // Same name as the radius CA, other key: a look-alike that did not sign the client certificate.
    pki.ca('fake-ca', 'Test radius CA', { algorithm: 'p256' });
    expect(problemsOf({ ca: 'fake-ca.pem', cert: 'good.pem', key: 'good.key' })).toEqual([
      {
        severity: 'warning',
        path: at('client_cert'),
        message: 'certs/good.pem was not issued by the CA in ca_cert (certs/fake-ca.pem)',
        hint: 'fine if the RADIUS server trusts its issuer "Test radius CA" for client certificates; otherwise use one from the CA in ca_cert',
      },
    ]);
  });

  it('follows an intermediate CA given after the client certificate', () => {
    const intermediate = pki.issue('intermediate', 'Test intermediate CA', radiusCa, 'ca', { algorithm: 'p256' });
    pki.issue('chained', 'chained client', intermediate, 'client', { algorithm: 'p256' });
    pki.write('chained-full.pem', Buffer.concat([pki.read('chained.pem'), pki.read('intermediate.pem')]));
    expect(problemsOf({ ca: 'radius-ca.pem', cert: 'chained-full.pem', key: 'chained.key' })).toEqual([]);
    expect(problemsOf({ ca: 'radius-ca.pem', cert: 'chained.pem', key: 'chained.key' })).toEqual([
      {
        severity: 'warning',
        path: at('client_cert'),
        message: 'certs/chained.pem was not issued by the CA in ca_cert (certs/radius-ca.pem)',
        hint: 'fine if the RADIUS server trusts its issuer "Test intermediate CA" for client certificates; otherwise use one from the CA in ca_cert',
      },
    ]);
  });
});

describe('checkCredentialSet: key usage and key types', () => {
  it('warns of a client certificate without clientAuth, whether the usage is absent or another', () => {
    pki.issue('no-eku', 'no eku', radiusCa, 'client-no-eku', { algorithm: 'p256' });
    pki.issue('server', 'server only', radiusCa, 'server', { algorithm: 'p256' });
    for (const name of ['no-eku', 'server']) {
      expect(problemsOf({ ca: 'radius-ca.pem', cert: `${name}.pem`, key: `${name}.key` })).toEqual([
        {
          severity: 'warning',
          path: at('client_cert'),
          message: `certs/${name}.pem is not meant for client authentication: its extended key usage lacks clientAuth`,
          hint: 'many RADIUS servers refuse it; ask for a client certificate with extended key usage clientAuth',
        },
      ]);
    }
  });

  it.each([
    ['ed25519', 'an Ed25519 key'],
    ['p521', 'an EC key on curve P-521'],
  ] as const)('refuses %s keys and certificates, naming the type', (algorithm, description) => {
    pki.issue(algorithm, `${algorithm} client`, radiusCa, 'client', { algorithm });
    expect(problemsOf({ ca: 'radius-ca.pem', cert: `${algorithm}.pem`, key: `${algorithm}.key` })).toEqual([
      {
        severity: 'error',
        path: at('client_cert'),
        message: `certs/${algorithm}.pem certifies ${description}, which the Monitoring Point does not support`,
        hint: 'use a certificate for an RSA key or an EC key on curve P-256 or P-384',
      },
      {
        severity: 'error',
        path: at('private_key'),
        message: `certs/${algorithm}.key holds ${description}, which the Monitoring Point does not support`,
        hint: 'use an RSA key or an EC key on curve P-256 or P-384',
      },
    ]);
  });
});
