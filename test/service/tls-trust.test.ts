import tls from 'node:tls';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ServiceCertificateError, createDataApiClient } from '../../src/service/index.js';
import { trustedCertificates } from '../../src/http/index.js';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { deviceCertificates, type DeviceCertificates } from '../support/device-certificates.js';
import { failureOf, textsOf, useCloseAfterAll } from '../support/failures.js';
import { clientOf, expectNoSecret, startService, tokenCredentials } from './service-fixtures.js';

/**
 * The service's certificate is always verified (system store plus service.tls.ca), TLS 1.2 at
 * least, and the token never leaves before that: the simulator proves no request reached it.
 */

let pki: DeviceCertificates;
let otherAddress: DeviceCertificates;
let caIssued: ServiceSimulator;
let issuedForOtherAddress: ServiceSimulator;
let selfIssued: ServiceSimulator;
const closeLater = useCloseAfterAll();

beforeAll(async () => {
  pki = deviceCertificates('127.0.0.1');
  otherAddress = deviceCertificates('127.0.0.2');
  caIssued = closeLater(
    await startService({ tls: { certPem: pki.serverCertPem, keyPem: pki.serverKeyPem, caPem: pki.caPem } }),
  );
  issuedForOtherAddress = closeLater(
    await startService({
      tls: { certPem: otherAddress.serverCertPem, keyPem: otherAddress.serverKeyPem, caPem: otherAddress.caPem },
    }),
  );
  selfIssued = closeLater(await startService());
});
const client = (...args: Parameters<typeof clientOf>) => closeLater(clientOf(...args), (rig) => rig.api.close());

describe('trust', () => {
  it('a certificate issued by service.tls.ca verifies', async () => {
    expect(await client(caIssued).api.listOrganizations()).toHaveLength(2);
  });

  it('without service.tls.ca, a certificate the system store does not know is refused before any request', async () => {
    const before = selfIssued.handshakes();
    const error = await failureOf(client(selfIssued, { caPem: null }).api.listOrganizations());
    expect(error).toBeInstanceOf(ServiceCertificateError);
    expect(error.code).toBe('MPPROV_SERVICE_TLS');
    expect(error.data).toMatchObject({ problem: 'untrusted', tlsCode: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    expect(error.message).toBe(
      `the certificate of ${selfIssued.url} is not issued by a CA in the system store or service.tls.ca (self-signed certificate); no token was sent`,
    );
    expect(selfIssued.requests()).toEqual([]);
    // The server learns of the refusal from the client's alert, a moment after the client gave up.
    await vi.waitFor(() => expect(selfIssued.handshakes().failed).toBeGreaterThan(before.failed));
    expectNoSecret(textsOf(error));
  });

  it('a CA the service was not issued by is refused the same way', async () => {
    const error = await failureOf(client(caIssued, { caPem: otherAddress.caPem }).api.listOrganizations());
    expect(error.code).toBe('MPPROV_SERVICE_TLS');
    expect(error.data).toMatchObject({ problem: 'untrusted' });
  });

  it('a certificate for another host name is refused, and the client does not hang afterwards', async () => {
    const { api } = client(issuedForOtherAddress);
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = await failureOf(api.listOrganizations());
      expect(error.code).toBe('MPPROV_SERVICE_TLS');
      expect(error.data).toMatchObject({ problem: 'wrong-name', tlsCode: 'ERR_TLS_CERT_ALTNAME_INVALID' });
      expect(error.message).toMatch(
        /^the certificate of https:\/\/127\.0\.0\.1:\d+\/api is not issued for this host name \(.*\); no token was sent$/,
      );
    }
    expect(issuedForOtherAddress.requests()).toEqual([]);
  });

  it('an extra CA is added to the store, not put in its place', () => {
    const trusted = trustedCertificates(pki.caPem) ?? [];
    // Node 22.15+ and 24 say what node itself trusts (its bundle, NODE_EXTRA_CA_CERTS, the system's
    // store): all of it stays; Node 20 knows only its bundle.
    const { getCACertificates } = tls as { getCACertificates?: (type: 'default' | 'system') => string[] };
    const store =
      getCACertificates === undefined
        ? tls.rootCertificates
        : [...new Set([...getCACertificates('default'), ...getCACertificates('system')])];
    expect(trusted).toEqual([...store, pki.caPem]);
    expect(trusted).toEqual(expect.arrayContaining([...tls.rootCertificates, pki.caPem]));
    expect(trustedCertificates(undefined)).toBeUndefined();
  });
});

describe('TLS 1.2 minimum', () => {
  it('refuses a service that offers only TLS 1.1, even where Node itself would allow it', async () => {
    const service = await startService({
      tlsVersions: { min: 'TLSv1', max: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' },
    });
    const saved = { min: tls.DEFAULT_MIN_VERSION, ciphers: tls.DEFAULT_CIPHERS };
    // Lowered process-wide for this test only: without the client's own minimum, TLS 1.1 would now connect.
    tls.DEFAULT_MIN_VERSION = 'TLSv1';
    tls.DEFAULT_CIPHERS = 'DEFAULT:@SECLEVEL=0';
    try {
      const error = await failureOf(client(service).api.listOrganizations());
      expect(error.code).toBe('MPPROV_SERVICE_TLS');
      expect(error.data).toMatchObject({ problem: 'handshake' });
      expect(error.message).toMatch(/the service must speak TLS 1\.2 or newer; no token was sent$/);
      expect(service.requests()).toEqual([]);
    } finally {
      tls.DEFAULT_MIN_VERSION = saved.min;
      tls.DEFAULT_CIPHERS = saved.ciphers;
      await service.close();
    }
  });
});

describe('unusable settings', () => {
  const make = (url: string, caPem?: string) => () =>
    createDataApiClient({ url, credentials: tokenCredentials(), caPem });

  it('a URL with a query is refused without repeating the query, which may hold a token', () => {
    expect(make('https://service.example/api?token=Query-Token-5150')).toThrow(
      /^the service URL https:\/\/service\.example\/api must not have a query or fragment$/,
    );
  });

  it('are refused when the client is made, naming what is wrong', () => {
    expect(make('http://service.example/api')).toThrow(
      'the service URL "http://service.example/api" must start with https://',
    );
    expect(make('https://user:pw@service.example/api')).toThrow(
      'the service URL must not contain a user name or password',
    );
    expect(make('not a url')).toThrow('the service URL "not a url" is not a URL; expected https://host[:port]/api');
    expect(make('https://service.example/api', 'not a PEM')).toThrow(
      'the CA configured for the service at https://service.example/api (service.tls.ca) is not a PEM certificate',
    );
  });
});
