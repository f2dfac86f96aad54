import type { DeviceClock } from '../admin-api/index.js';
import type { DesiredStanza, PlanRefusal } from './plan-types.js';

/** Beyond this the device's clock is worth a warning: EAP-TLS judges certificates by it. */
const MAX_CLOCK_SKEW_MS = 5 * 60_000;

/** "2 h 5 min", "7 min", "40 s". */
function span(ms: number): string {
  const seconds = Math.round(Math.abs(ms) / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h${minutes % 60 === 0 ? '' : ` ${minutes % 60} min`}`;
  return `${Math.round(hours / 24)} days`;
}

const utc = (date: Date): string => `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;

/**
 * The device's clock (its HTTP Date header) against this machine's and against every certificate
 * about to be installed (the stanzas the plan posts: the client certificate, the `ca_cert` chains
 * of the set and its inner set, a PFX's other certificates; wired and wireless alike). Pure.
 * - more than 5 minutes off: a warning naming both times;
 * - a certificate not valid at the device's time: a refusal naming the file, with the fix (set
 *   the MP's time), since 802.1X would fail after the restart and the MP go dark on that port.
 */
export function judgeDeviceClock(
  clock: DeviceClock | undefined,
  posted: readonly DesiredStanza[],
): { warnings: string[]; refusals: PlanRefusal[] } {
  if (clock === undefined) return { warnings: [], refusals: [] };
  const skew = clock.deviceTime.getTime() - clock.localTime.getTime();
  const offBy = `${span(skew)} ${skew < 0 ? 'behind' : 'ahead of'} this machine's`;
  const warnings =
    Math.abs(skew) > MAX_CLOCK_SKEW_MS
      ? [
          `the device's clock is ${offBy} (device ${utc(clock.deviceTime)}, here ${utc(clock.localTime)}): 802.1X with certificates fails when the MP's clock is outside their validity; set the MP's time`,
        ]
      : [];
  const refusals: PlanRefusal[] = [];
  const seen = new Set<string>();
  const refuse = (stanza: string, what: string, from: string, to: string, consequence: string) => {
    const notBefore = new Date(from);
    const notAfter = new Date(to);
    if (clock.deviceTime >= notBefore && clock.deviceTime <= notAfter) return;
    refusals.push({
      reason: 'device-clock',
      message: `${stanza}: ${what} is valid from ${utc(notBefore)} to ${utc(notAfter)}, but the device's clock says ${utc(clock.deviceTime)} (${offBy}): ${consequence}; set the MP's time, then run again`,
    });
  };
  for (const stanza of posted) {
    // An interface's inet and inet6 stanzas carry the same 802.1X: judged once.
    const facts = stanza.dot1x;
    if (facts === undefined || seen.has(stanza.name)) continue;
    seen.add(stanza.name);
    const cert = facts.clientCert;
    if (cert?.notBefore !== undefined && cert.notAfter !== undefined)
      refuse(
        stanza.name,
        `the client certificate ${cert.source}`,
        cert.notBefore,
        cert.notAfter,
        'the MP would refuse it at 802.1X',
      );
    for (const other of facts.otherCertificates ?? [])
      refuse(
        stanza.name,
        `${other.label} (${other.key})`,
        other.notBefore,
        other.notAfter,
        /(^|\.)ca_cert$/.test(other.key)
          ? "the MP could not trust the RADIUS server's certificate with it at 802.1X"
          : 'the MP would send the RADIUS server a chain it cannot verify at 802.1X',
      );
  }
  return { warnings, refusals };
}
