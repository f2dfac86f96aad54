import { describe, expect, it } from 'vitest';
import { rankSuspects } from '../../src/apply/dot1x-suspects.js';
import type { Dot1xFacts } from '../../src/plan/index.js';

/**
 * The likely causes of a refused 802.1X port, most likely first, decided without a device: the
 * method's own order, with the evidence of this run (the client certificate's dates seen now, the
 * validator's warnings inside the dot1x block) moved to the front.
 */

const NOW = new Date('2026-11-23T12:00:00.000Z');
const LONG_VALID = { notBefore: '2026-01-01T00:00:00.000Z', notAfter: '2036-01-01T00:00:00.000Z' };

const peap = (extra: Partial<Dot1xFacts> = {}): Dot1xFacts => ({
  eap: 'peap',
  inner: 'mschapv2',
  wireless: false,
  identity: 'mp01@corp.example',
  caCert: 'certs/radius-ca.pem',
  warnings: [],
  ...extra,
});
const tls = (extra: Partial<Dot1xFacts> = {}): Dot1xFacts => ({
  eap: 'tls',
  wireless: false,
  identity: 'mp01@corp.example',
  caCert: 'certs/radius-ca.pem',
  clientCert: { source: 'certs/mp01-cert.pem', ...LONG_VALID },
  warnings: [],
  ...extra,
});
const order = (facts: Dot1xFacts, now = NOW): string[] => rankSuspects(facts, now).map((s) => s.suspect);

describe('rankSuspects', () => {
  it("PEAP-MSCHAPv2: the password, the identity, then the RADIUS server's CA (only when ca_cert is given)", () => {
    expect(rankSuspects(peap(), NOW).map((s) => s.text)).toEqual([
      'the password is not the one the RADIUS server holds for "mp01@corp.example"',
      'the RADIUS server does not know the identity "mp01@corp.example"',
      "the RADIUS server's certificate is not issued by ca_cert (certs/radius-ca.pem), so the Monitoring Point refuses the server",
    ]);
    // Without ca_cert the Monitoring Point does not check the server at all: not a cause.
    const { caCert: _ca, ...noCa } = peap();
    expect(order(noCa)).toEqual(['password', 'identity']);
  });

  it('EAP-MD5: the password, then the identity', () => {
    expect(order({ eap: 'md5', wireless: false, identity: 'mp01', warnings: [] })).toEqual(['password', 'identity']);
  });

  it("EAP-TLS and PEAP with inner TLS: the client certificate's issuer, the identity, its dates, the CA", () => {
    expect(order(tls())).toEqual(['client-certificate', 'identity', 'validity', 'server-ca']);
    expect(order(peap({ inner: 'tls', clientCert: { source: 'certs/mp01-inner-cert.pem', ...LONG_VALID } }))).toEqual([
      'client-certificate',
      'identity',
      'validity',
      'server-ca',
    ]);
  });

  it('names the outer (anonymous) identity beside the identity', () => {
    const identity = rankSuspects(tls({ anonymousIdentity: 'anonymous@corp.example' }), NOW).find(
      (s) => s.suspect === 'identity',
    );
    expect(identity?.text).toBe(
      'the RADIUS server does not know the identity "mp01@corp.example" or the outer (anonymous) identity "anonymous@corp.example" it is first sent under',
    );
  });

  it('puts a client certificate that has expired since validation first, with when', () => {
    const expired = tls({
      clientCert: {
        source: 'certs/expiring.pem',
        notBefore: '2026-11-22T00:00:00.000Z',
        notAfter: '2026-11-23T11:59:54.000Z',
      },
    });
    const ranked = rankSuspects(expired, NOW);
    expect(ranked.map((s) => s.suspect)).toEqual(['validity', 'client-certificate', 'identity', 'server-ca']);
    expect(ranked[0]?.text).toBe(
      "the client certificate certs/expiring.pem has expired or is not yet valid by the Monitoring Point's clock [it expired at 2026-11-23T11:59:54.000Z, after this run validated it]",
    );
    // Not yet valid counts the same.
    expect(
      order(
        tls({
          clientCert: { source: 'c.pem', notBefore: '2026-11-24T00:00:00.000Z', notAfter: '2027-01-01T00:00:00.000Z' },
        }),
      )[0],
    ).toBe('validity');
  });

  it('makes a validator warning of this run the first suspect of what it points at, and quotes it', () => {
    const warned = rankSuspects(
      peap({ warnings: [{ key: 'ca_cert', message: 'certs/radius-ca.pem expires on 2026-12-01, in 8 days' }] }),
      NOW,
    );
    expect(warned.map((s) => s.suspect)).toEqual(['server-ca', 'password', 'identity']);
    expect(warned[0]?.text).toBe(
      "the RADIUS server's certificate is not issued by ca_cert (certs/radius-ca.pem), so the Monitoring Point refuses the server [validator warning in this run: certs/radius-ca.pem expires on 2026-12-01, in 8 days]",
    );
    const issuer = 'certs/other-client.pem was not issued by the CA in ca_cert (certs/radius-ca.pem)';
    const tlsWarned = rankSuspects(
      tls({
        clientCert: { source: 'certs/other-client.pem', ...LONG_VALID },
        warnings: [{ key: 'client_cert', message: issuer }],
      }),
      NOW,
    );
    expect(tlsWarned[0]?.text).toContain(
      `the RADIUS server does not accept the client certificate certs/other-client.pem: its issuer is not a CA the server trusts`,
    );
    expect(tlsWarned[0]?.text).toContain(`[validator warning in this run: ${issuer}]`);
    // A warning on the inner set of PEAP with inner TLS points at the inner certificate.
    expect(
      order(
        peap({
          inner: 'tls',
          clientCert: { source: 'i.pem', ...LONG_VALID },
          warnings: [{ key: 'inner_tls.ca_cert', message: 'w' }],
        }),
      )[0],
    ).toBe('server-ca');
  });

  it("moves the certificate's dates ahead of the identity when it expires within 30 days (as the validator warned)", () => {
    const dates = { source: 'c.pem', notBefore: '2026-01-01T00:00:00.000Z', notAfter: '2026-12-01T00:00:00.000Z' };
    const soon = tls({
      clientCert: dates,
      warnings: [{ key: 'client_cert', message: 'c.pem expires on 2026-12-01, in 8 days' }],
    });
    expect(order(soon)).toEqual(['client-certificate', 'validity', 'identity', 'server-ca']);
    expect(rankSuspects(soon, NOW)[1]?.text).toContain('[it expires at 2026-12-01T00:00:00.000Z, within 30 days]');
    expect(order(tls({ clientCert: dates }))).toEqual(['validity', 'client-certificate', 'identity', 'server-ca']);
  });

  it('ignores a warning that points at no cause (the block itself)', () => {
    const { caCert: _ca, ...noCa } = peap();
    expect(
      order({
        ...noCa,
        warnings: [
          { key: '', message: 'PEAP without ca_cert: the Monitoring Point will not verify the RADIUS server' },
        ],
      }),
    ).toEqual(['password', 'identity']);
  });
});
