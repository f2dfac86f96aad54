import { z } from 'zod';
import { visibleText } from '../core/visible-text.js';
import { Dot1xOutcome, EapMethodName, type Dot1xVerdict } from './preflight-report.js';

/**
 * wpa_supplicant's own lines (its stdout at the default level: the control events and a few INFO
 * lines) read into the 802.1X verdict with its cause, as the supplicant saw it. Pure: the runner
 * feeds every line it got so far and asks again after each one. The server's words (a certificate
 * subject, an error) are data: escaped and cut before they enter a sentence.
 */

export interface VerdictContext {
  method: EapMethodName;
  identity: string;
}

/** In double quotes, its controls made visible (`\x1b`): the quotes mark where the server's words start and end. */
const quoted = (text: string): string => `"${visibleText(text.slice(0, 120))}"`;

/** The verdict the lines already decide, or undefined while the exchange goes on. */
export function readVerdict(lines: readonly string[], context: VerdictContext): Dot1xVerdict | undefined {
  const method = context.method;
  const has = (event: string) => lines.some((line) => line.includes(event));
  if (has('CTRL-EVENT-EAP-SUCCESS'))
    return {
      outcome: Dot1xOutcome.Authenticated,
      method,
      cause: `the port accepted ${method} for identity ${quoted(context.identity)}`,
    };
  const certError = lines.find((line) => line.includes('CTRL-EVENT-EAP-TLS-CERT-ERROR'));
  if (certError !== undefined) {
    const subject = /subject='([^']*)'/.exec(certError)?.[1] ?? '';
    const err = /err='([^']*)'/.exec(certError)?.[1] ?? 'not trusted';
    return {
      outcome: Dot1xOutcome.ServerNotTrusted,
      method,
      cause: `the authentication server's certificate is not issued by ca_cert: ${quoted(subject)} failed with ${quoted(err)}`,
    };
  }
  const keyError = lines.find((line) => /TLS: Failed to load (private key|client certificate|CA)/i.test(line));
  if (keyError !== undefined)
    return {
      outcome: Dot1xOutcome.Error,
      method,
      cause: `wpa_supplicant could not use the stick's files: ${quoted(keyError.replace(/^[^:]*: /, ''))}`,
    };
  // wpa_supplicant gives up after 50 rounds of one exchange: a switch that keeps restarting EAP
  // (a flood, a loop on the port) said nothing about the credentials, so no `refused`.
  if (lines.some((line) => /EAP: more than \d+ authentication rounds/.test(line)))
    return {
      outcome: Dot1xOutcome.Error,
      method,
      cause:
        'the authenticator kept restarting the exchange until wpa_supplicant gave up (more than 50 EAP rounds): a faulty switch or a loop on the port, not a verdict on the credentials',
    };
  if (!has('CTRL-EVENT-EAP-FAILURE')) return undefined;
  return { outcome: Dot1xOutcome.Refused, method, cause: refusalCause(lines, context) };
}

function refusalCause(lines: readonly string[], { method, identity }: VerdictContext): string {
  const who = quoted(identity);
  const selected = lines.some((line) => line.includes('CTRL-EVENT-EAP-METHOD'));
  if (!selected) {
    const proposed = /CTRL-EVENT-EAP-PROPOSED-METHOD .*method=(\d+)/.exec(lines.join('\n'))?.[1];
    return `the authentication server refused ${method} for identity ${who}${proposed === undefined ? '' : ` (it proposed EAP method ${proposed} instead)`}`;
  }
  const mschap = lines.find((line) => line.includes('EAP-MSCHAPV2: failure message'));
  if (mschap !== undefined) {
    const code = /error (\d+)/.exec(mschap)?.[1];
    return `RADIUS rejected the password of identity ${who} (MSCHAPv2 error ${code ?? 'unknown'})`;
  }
  switch (method) {
    case EapMethodName.PeapMschapv2:
      // The inner exchange ended before any password was checked: the server knows no such identity.
      return `RADIUS rejected the identity ${who}: it ended the inner MSCHAPv2 exchange before checking a password`;
    case EapMethodName.EapMd5:
      return `RADIUS rejected the identity ${who} or its password (EAP-MD5 cannot tell which)`;
    default:
      return `RADIUS refused the client certificate of identity ${who}: it ended the TLS handshake (a certificate it does not trust, expired, or revoked)`;
  }
}

/**
 * When the deadline passes without a verdict: no authenticator, or one that stopped answering.
 * `carrier` false: the port had no link at the deadline, so no switch could have answered; that
 * is said as such rather than as a port without 802.1X.
 */
export function verdictAtDeadline(
  lines: readonly string[],
  method: EapMethodName,
  seconds: number,
  carrier = true,
): Dot1xVerdict {
  if (lines.some((line) => line.includes('CTRL-EVENT-EAP-STARTED')))
    return {
      outcome: Dot1xOutcome.Error,
      method,
      cause: `the authentication started but did not finish within ${seconds} s`,
    };
  if (!carrier)
    return {
      outcome: Dot1xOutcome.Error,
      method,
      cause: `the port had no link within ${seconds} s (no carrier): the cable is not plugged into the switch, or the switch port is down`,
    };
  return {
    outcome: Dot1xOutcome.NoAuthenticator,
    method,
    cause: `no authenticator answered within ${seconds} s: the port has no 802.1X`,
  };
}

const IpLinkShow = z.array(z.looseObject({ flags: z.array(z.string()) }));

/** Whether `ip -j link show dev PORT` says the port has a carrier (true where it cannot be read). Pure. */
export function hasCarrier(ipJson: string): boolean {
  try {
    return !(IpLinkShow.parse(JSON.parse(ipJson))[0]?.flags.includes('NO-CARRIER') ?? false);
  } catch {
    return true;
  }
}
