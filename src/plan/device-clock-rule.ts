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
 * The device's clock (its HTTP Date header) against this machine's and against the client
 * certificates about to be installed (the stanzas the plan posts). Pure.
 * - more than 5 minutes off: a warning naming both times;
 * - a certificate not valid at the device's time: a refusal, with the fix (set the MP's time),
 *   since the MP would refuse it at 802.1X after the restart and go dark on that port.
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
  for (const stanza of posted) {
    const cert = stanza.dot1x?.clientCert;
    if (cert?.notBefore === undefined || cert.notAfter === undefined || seen.has(stanza.name)) continue;
    seen.add(stanza.name);
    const notBefore = new Date(cert.notBefore);
    const notAfter = new Date(cert.notAfter);
    if (clock.deviceTime >= notBefore && clock.deviceTime <= notAfter) continue;
    refusals.push({
      reason: 'device-clock',
      message: `${stanza.name}: the client certificate ${cert.source} is valid from ${utc(notBefore)} to ${utc(notAfter)}, but the device's clock says ${utc(clock.deviceTime)} (${offBy}): the MP would refuse it at 802.1X; set the MP's time, then run again`,
    });
  }
  return { warnings, refusals };
}
