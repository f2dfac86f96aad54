/**
 * What `mpprov preflight` found on the laptop's port: the one document its `--json` prints, the
 * text output is rendered from, and the flow hook reads. Field names are the JSON's own.
 */

export const Dot1xOutcome = {
  Authenticated: 'authenticated',
  Refused: 'refused',
  ServerNotTrusted: 'server-not-trusted',
  NoAuthenticator: 'no-authenticator',
  NotConfigured: 'not-configured',
  Error: 'error',
} as const;
export type Dot1xOutcome = (typeof Dot1xOutcome)[keyof typeof Dot1xOutcome];

export const EapMethodName = {
  PeapMschapv2: 'PEAP-MSCHAPv2',
  PeapTls: 'PEAP-TLS',
  EapTls: 'EAP-TLS',
  EapMd5: 'EAP-MD5',
} as const;
export type EapMethodName = (typeof EapMethodName)[keyof typeof EapMethodName];

export const DhcpOutcome = { Address: 'address', NoAnswer: 'no-answer', Skipped: 'skipped' } as const;
export type DhcpOutcome = (typeof DhcpOutcome)[keyof typeof DhcpOutcome];

export interface Dot1xVerdict {
  outcome: Dot1xOutcome;
  method?: EapMethodName;
  /** The outcome's cause as the supplicant saw it, one sentence. */
  cause: string;
}

export interface DhcpResult {
  outcome: DhcpOutcome;
  /** `a.b.c.d/len` */
  address?: string;
  gateway?: string;
  dns?: string[];
}

export interface PreflightReport {
  port: string;
  monitoring_point: string | null;
  interface: string | null;
  dot1x: Dot1xVerdict;
  dhcp: DhcpResult;
  /** null: there was no gateway to ask (none given, none learnt, or the run stopped before). */
  gateway_answers: boolean | null;
  /** null: the stick gives nothing the port's addresses could be compared with. */
  fits: boolean | null;
  problems: string[];
}

const PORT_ACCEPTED: readonly Dot1xOutcome[] = [Dot1xOutcome.Authenticated, Dot1xOutcome.NotConfigured];

/** What the stick expects of the port, beside the report, to judge it. */
export interface PortExpectation {
  usesDhcp: boolean;
  /** What follows the 802.1X could not be tried: a VLAN the laptop cannot make, or a failed step. */
  notTried: boolean;
}

/**
 * Whether the port is fit for the Monitoring Point: the port accepted the credentials (or the
 * interface has none), gave an address where the stick uses DHCP, everything could be tried (a VLAN too), and
 * nothing shows the addresses do not fit (`fits: null`, cannot be judged, does not fail the port).
 */
export function portPassed(report: PreflightReport, expected: PortExpectation): boolean {
  if (!PORT_ACCEPTED.includes(report.dot1x.outcome) || expected.notTried) return false;
  if (expected.usesDhcp && report.dhcp.outcome !== DhcpOutcome.Address) return false;
  return report.fits !== false;
}
