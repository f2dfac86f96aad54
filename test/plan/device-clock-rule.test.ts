import { describe, expect, it } from 'vitest';
import { judgeDeviceClock } from '../../src/plan/device-clock-rule.js';
import type { DesiredStanza } from '../../src/plan/index.js';

/** The clock rule alone: the device's Date header against this machine and the certificates posted. */

const at = (iso: string) => new Date(iso);
const tlsStanza = (notBefore: string, notAfter: string): DesiredStanza => ({
  name: 'eth1',
  family: 'inet',
  fields: {},
  secrets: {},
  dot1x: {
    eap: 'tls',
    wireless: false,
    identity: 'mp01',
    clientCert: { source: 'certs/mp01.pem', notBefore, notAfter },
    warnings: [],
  },
});

describe('the device clock rule', () => {
  it('no Date header: nothing to say', () => {
    expect(judgeDeviceClock(undefined, [tlsStanza('2020-01-01T00:00:00Z', '2030-01-01T00:00:00Z')])).toEqual({
      warnings: [],
      refusals: [],
    });
  });

  it('within 5 minutes: no warning; beyond: a warning naming both clocks', () => {
    const here = at('2027-03-01T12:00:00Z');
    expect(judgeDeviceClock({ deviceTime: at('2027-03-01T12:04:59Z'), localTime: here }, []).warnings).toEqual([]);
    expect(judgeDeviceClock({ deviceTime: at('2027-03-01T14:05:00Z'), localTime: here }, []).warnings).toEqual([
      "the device's clock is 2 h 5 min ahead of this machine's (device 2027-03-01 14:05:00 UTC, here 2027-03-01 12:00:00 UTC): 802.1X with certificates fails when the MP's clock is outside their validity; set the MP's time",
    ]);
  });

  it('a certificate that has expired at the device time: refused with the fix, even with the laptop in range', () => {
    const { refusals } = judgeDeviceClock(
      { deviceTime: at('2031-06-01T00:00:00Z'), localTime: at('2027-03-01T12:00:00Z') },
      [tlsStanza('2020-01-01T00:00:00Z', '2030-01-01T00:00:00Z')],
    );
    expect(refusals).toEqual([
      {
        reason: 'device-clock',
        message:
          "eth1: the client certificate certs/mp01.pem is valid from 2020-01-01 00:00:00 UTC to 2030-01-01 00:00:00 UTC, but the device's clock says 2031-06-01 00:00:00 UTC (1553 days ahead of this machine's): the MP would refuse it at 802.1X; set the MP's time, then run again",
      },
    ]);
  });

  it('the other certificates installed: only those not valid at the device time are refused, each named with its key', () => {
    const stanza: DesiredStanza = {
      name: 'eth1',
      family: 'inet',
      fields: {},
      secrets: {},
      dot1x: {
        eap: 'peap',
        inner: 'tls',
        wireless: false,
        identity: 'mp01',
        otherCertificates: [
          {
            key: 'ca_cert',
            label: 'certificate 1 ("Old Root") in certs/bundle.pem',
            notBefore: '2010-01-01T00:00:00Z',
            notAfter: '2020-01-01T00:00:00Z',
          },
          {
            key: 'ca_cert',
            label: 'certificate 2 ("New Root") in certs/bundle.pem',
            notBefore: '2019-01-01T00:00:00Z',
            notAfter: '2040-01-01T00:00:00Z',
          },
          {
            key: 'inner_tls.private_key',
            label: 'certificate 2 ("Issuing CA") in certs/inner.p12',
            notBefore: '2026-06-01T00:00:00Z',
            notAfter: '2036-06-01T00:00:00Z',
          },
        ],
        warnings: [],
      },
    };
    // Both families of one interface carry the same 802.1X: said once.
    const { refusals } = judgeDeviceClock(
      { deviceTime: at('2026-01-01T00:00:00Z'), localTime: at('2026-01-01T00:01:00Z') },
      [stanza, { ...stanza, family: 'inet6' }],
    );
    expect(refusals.map((r) => r.message)).toEqual([
      "eth1: certificate 1 (\"Old Root\") in certs/bundle.pem (ca_cert) is valid from 2010-01-01 00:00:00 UTC to 2020-01-01 00:00:00 UTC, but the device's clock says 2026-01-01 00:00:00 UTC (1 min behind this machine's): the MP could not trust the RADIUS server's certificate with it at 802.1X; set the MP's time, then run again",
      "eth1: certificate 2 (\"Issuing CA\") in certs/inner.p12 (inner_tls.private_key) is valid from 2026-06-01 00:00:00 UTC to 2036-06-01 00:00:00 UTC, but the device's clock says 2026-01-01 00:00:00 UTC (1 min behind this machine's): the MP would send the RADIUS server a chain it cannot verify at 802.1X; set the MP's time, then run again",
    ]);
  });
});
