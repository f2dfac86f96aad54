import type { ErrorCode } from '../core/errors.js';
import { oneLine } from '../http/index.js';
import { type Appliance, CONNECTION_STATUSES, type ConnectionStatus } from './data-api-model.js';

/**
 * What the post-check found, as data: a kind to branch on, and one sentence for the technician
 * that goes as it is into the step list, --json, usb.log and the result file.
 */

export const ConnectionOutcomeKind = {
  Connected: 'connected',
  /** The service lists no MP of that hostname (for this token). */
  Unknown: 'unknown',
  Unavailable: 'unavailable',
  Blocked: 'blocked',
  Removed: 'removed',
  New: 'new',
  /** A status outside the documented set (a real service may say ONLINE): reported as said, not confirmed. */
  OtherStatus: 'other-status',
  /** 401 of any kind: the token (or e-mail and password) was not accepted. */
  BadToken: 'bad-token',
  /** 403: the token may not read the MPs. */
  NoPermission: 'no-permission',
  /** No usable answer: network, TLS, 5xx, or an answer retrying cannot change (404: wrong URL). */
  Unreachable: 'unreachable',
  /** The wait ran out before the shared rate limit gave this MP a single turn. */
  Unchecked: 'unchecked',
} as const;
export type ConnectionOutcomeKind = (typeof ConnectionOutcomeKind)[keyof typeof ConnectionOutcomeKind];

/** What the post-check knew when it ended. */
export interface OutcomeFacts {
  hostname: string;
  /** From the first poll to the outcome. */
  waitedMs: number;
  /** Requests sent for this MP. */
  polls: number;
  /**
   * What the service last said about the MP: its status as said, or `absent` when it listed no such
   * MP (lower-case, apart from the service's upper-case words; a service saying `absent` itself
   * is taken as not listing it, which confirms nothing either way).
   */
  lastStatus?: ConnectionStatus | undefined;
  /** The MP's record as the service last listed it. */
  appliance?: Appliance | undefined;
  /** For the failure kinds: the error's code and sentence. */
  errorCode?: ErrorCode | undefined;
  reason?: string | undefined;
}

export interface ConnectionOutcome extends OutcomeFacts {
  kind: ConnectionOutcomeKind;
  /** Only for `connected`: true. */
  connected: boolean;
  sentence: string;
}

const STATUS_KIND: Record<(typeof CONNECTION_STATUSES)[number] | 'absent', ConnectionOutcomeKind> = {
  AVAILABLE: ConnectionOutcomeKind.Connected,
  UNAVAILABLE: ConnectionOutcomeKind.Unavailable,
  BLOCKED: ConnectionOutcomeKind.Blocked,
  REMOVED: ConnectionOutcomeKind.Removed,
  NEW: ConnectionOutcomeKind.New,
  absent: ConnectionOutcomeKind.Unknown,
};

export function outcomeOfStatus(facts: OutcomeFacts & { lastStatus: ConnectionStatus }): ConnectionOutcome {
  const known = [...CONNECTION_STATUSES, 'absent' as const].find((status) => status === facts.lastStatus);
  return outcome(known === undefined ? ConnectionOutcomeKind.OtherStatus : STATUS_KIND[known], facts);
}

/**
 * The service's word as it may stand in a sentence: one line, short, long encoded runs hidden
 * (it is the service's text, not ours; control characters are escaped where lines are written).
 */
export function statusText(status: string): string {
  return oneLine(status, (text) => text, MAX_STATUS) ?? '(an empty status)';
}

const MAX_STATUS = 60;

export function outcome(kind: ConnectionOutcomeKind, facts: OutcomeFacts): ConnectionOutcome {
  return { kind, connected: kind === ConnectionOutcomeKind.Connected, ...facts, sentence: sentenceOf(kind, facts) };
}

function sentenceOf(kind: ConnectionOutcomeKind, facts: OutcomeFacts): string {
  const seconds = `${Math.round(facts.waitedMs / 1000)} s`;
  switch (kind) {
    case ConnectionOutcomeKind.Connected:
      return 'connected to the service';
    case ConnectionOutcomeKind.Unknown:
      return `unknown to the service: it lists no Monitoring Point with hostname "${facts.hostname}" (checked for ${seconds})`;
    case ConnectionOutcomeKind.Unavailable:
      return `still UNAVAILABLE after ${seconds}: the service has not heard from it since the restart (check DNS, proxy, firewall and 802.1X on its port)`;
    case ConnectionOutcomeKind.Blocked:
      return 'BLOCKED in the service: an administrator of the service must unblock it';
    case ConnectionOutcomeKind.Removed:
      return 'REMOVED from the service: it must be added to the service again';
    case ConnectionOutcomeKind.New:
      return `still NEW in the service after ${seconds}: it has not reported yet`;
    case ConnectionOutcomeKind.OtherStatus:
      return `not confirmed after ${seconds}: the service says ${statusText(facts.lastStatus ?? '')}, which is not a status mpprov knows (AVAILABLE means connected)`;
    case ConnectionOutcomeKind.BadToken:
      return `bad token: ${facts.reason ?? 'the service did not accept the credentials'}`;
    case ConnectionOutcomeKind.NoPermission:
      return `no permission: ${facts.reason ?? 'the service denied access'}`;
    case ConnectionOutcomeKind.Unreachable:
      return `service unreachable: ${facts.reason ?? 'no answer'}`;
    case ConnectionOutcomeKind.Unchecked:
      return `not checked: the service's rate limit, shared by every device of this run, gave it no turn within ${seconds}`;
  }
}
