import type { Dot1xResult } from './dot1x-backend.js';
import { SupplicantVerdict, type AttemptObservation } from './eap-attempt.js';

/**
 * The verdict of one authentication on the wire, and a sentence a field engineer understands.
 * Authorized needs both sides: wpa_supplicant's CTRL-EVENT-EAP-SUCCESS and hostapd's port flag
 * AUTHORIZED. The reasons come from the daemons' own lines (default verbosity, no secrets);
 * pure, so that each can be tested from recorded logs.
 */

export interface AttemptContext {
  /** The method as a person names it: "PEAP-MSCHAPv2", "EAP-TLS", ... */
  method: string;
  /** The identity the authentication server decides on (PEAP: the inner one). */
  identity: string;
  /** The stanza's file behind a path the daemons were given, e.g. `wpa_private_key "key-1.p12"`. */
  describeFile(path: string): string | undefined;
}

const EAP_TYPES: Record<string, string> = { '4': 'EAP-MD5', '13': 'EAP-TLS', '25': 'PEAP', '26': 'EAP-MSCHAPv2' };

export function judgeAttempt(seen: AttemptObservation, context: AttemptContext): Dot1xResult {
  const who = `"${context.identity}"`;
  switch (seen.verdict) {
    case SupplicantVerdict.Success:
      return seen.portAuthorized
        ? {
            authorized: true,
            reason: `authorized on the wire by ${context.method} as ${who} (wpa_supplicant: EAP success; hostapd: port authorized)`,
          }
        : deny('wpa_supplicant reported EAP success, but hostapd did not authorize the port');
    case SupplicantVerdict.Failure:
      if (seen.portAuthorized)
        return deny('wpa_supplicant reported EAP failure, yet hostapd shows the port authorized');
      return deny(explainFailure(seen, context));
    case SupplicantVerdict.Timeout:
      return deny(
        `no EAP result within ${seconds(seen.timeoutMs)} s${lastWords('wpa_supplicant', seen.supplicantLog)}`,
      );
    case SupplicantVerdict.Exited:
      return deny(`wpa_supplicant stopped before any EAP result${lastWords('wpa_supplicant', seen.supplicantLog)}`);
    case SupplicantVerdict.NoAuthenticator:
      return deny(`the switch port's authenticator (hostapd) did not start${lastWords('hostapd', seen.hostapdLog)}`);
  }
}

function deny(reason: string): Dot1xResult {
  return { authorized: false, reason };
}

function explainFailure(seen: AttemptObservation, context: AttemptContext): string {
  const supplicant = seen.supplicantLog;
  const hostapd = seen.hostapdLog;
  const find = (lines: string[], pattern: RegExp) => {
    for (const line of lines) {
      const match = pattern.exec(line);
      if (match !== null) return match;
    }
    return undefined;
  };
  const file = (path: string | undefined, fallback: string) =>
    (path === undefined ? undefined : context.describeFile(path)) ?? fallback;

  const serverRejected = find(
    supplicant,
    /CTRL-EVENT-EAP-TLS-CERT-ERROR reason=\d+ depth=\d+ subject='([^']*)' err='([^']*)'/,
  );
  if (serverRejected !== undefined) {
    return `the supplicant rejects the authentication server: ${serverRejected[2]} (certificate ${serverRejected[1]})`;
  }
  const keyUnreadable = find(supplicant, /TLS: Failed to load private key '([^']*)'/);
  const keyMismatch = find(supplicant, /key values mismatch|Private key failed verification/);
  if (keyUnreadable !== undefined || keyMismatch !== undefined) {
    const key = file(keyUnreadable?.[1], 'its private key');
    return keyMismatch !== undefined
      ? `wpa_supplicant cannot use ${key}: it does not match the client certificate`
      : `wpa_supplicant cannot load ${key} (wrong or missing password, or a form it cannot read)`;
  }
  const certUnreadable = find(
    supplicant,
    /TLS: Failed to (?:load|set) (client certificate|root certificates?|CA certificate)[^']*(?:'([^']*)')?/,
  );
  if (certUnreadable !== undefined)
    return `wpa_supplicant cannot load ${file(certUnreadable[2], `its ${certUnreadable[1]}`)}`;
  const clientRejected = find(
    hostapd,
    /TLS: Certificate verification failed, error \d+ \(([^)]*)\)(?: depth \d+ for '([^']*)')?/,
  );
  if (clientRejected !== undefined) {
    return `the authentication server rejects the client certificate${clientRejected[2] !== undefined ? ` ${clientRejected[2]}` : ''}: ${clientRejected[1]}`;
  }
  const mschap = find(supplicant, /EAP-MSCHAPV2: failure message: '([^']*)'(?: \(([^)]*)\))?/);
  if (mschap !== undefined) {
    return `the authentication server refused the password of "${context.identity}" (EAP-MSCHAPv2: ${mschap[2] ?? mschap[1]})`;
  }
  const request = find(supplicant, /CTRL-REQ-([A-Z_]+)/);
  if (request !== undefined)
    return `wpa_supplicant stopped to ask for input a Monitoring Point never gets (${(request[1] ?? '').toLowerCase()})`;
  const selected = find(supplicant, /CTRL-EVENT-EAP-METHOD EAP vendor \d+ method \d+/);
  const refused = supplicant
    .map((l) => /CTRL-EVENT-EAP-PROPOSED-METHOD vendor=\d+ method=(\d+) -> NAK/.exec(l)?.[1])
    .filter((m) => m !== undefined);
  if (selected === undefined && refused.length > 0) {
    const proposed = [...new Set(refused.map((m) => EAP_TYPES[m] ?? `EAP type ${m}`))].join(', ');
    return `the authentication server does not let "${context.identity}" use ${context.method} (it proposed ${proposed}): the identity is unknown to it or may not use that method`;
  }
  return `the authentication server refused ${context.method} for "${context.identity}" (EAP failure)`;
}

function seconds(ms: number): string {
  return Number.isInteger(ms / 1000) ? String(ms / 1000) : (ms / 1000).toFixed(1);
}

/** `; last wpa_supplicant line: "..."` for the end of a sentence, or nothing without output. */
function lastWords(daemon: string, log: string[]): string {
  const last = [...log]
    .reverse()
    .find((l) => l.trim() !== '' && !/CTRL-EVENT-(DSCP-POLICY|TERMINATING|SUBNET-STATUS)/.test(l));
  return last === undefined ? '' : ` (last ${daemon} line: "${last.trim()}")`;
}
