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
});
