import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, isMpprovError } from '../core/errors.js';
import {
  ConnectionOutcomeKind,
  outcome,
  outcomeOfStatus,
  type ConnectionOutcome,
  type OutcomeFacts,
  statusText,
} from './connection-outcome.js';
import type { DataApi } from './data-api-client.js';
import type { Appliance, ConnectionStatus } from './data-api-model.js';
import { isServiceError } from './service-errors.js';

/**
 * The post-check: after a device's restart and read-back, ask the service until it lists the MP
 * as AVAILABLE or the wait runs out (docs/service-model.md, "The post-check").
 * - The wait counts from the first poll and is never exceeded: a request still waiting for its
 *   rate-limit turn or its answer is abandoned when it ends.
 * - 401 and 403 end it at once (retrying cannot fix them), so do answers no retry can change
 *   (404: a wrong service.url; 400, 406, a certificate that does not verify, a malformed answer).
 * - 500, other 5xx, network failures, timeouts and exhausted 429s are retried within the wait.
 * - Any other status (UNAVAILABLE, NEW, BLOCKED, REMOVED, absent) is polled on: the spec stops
 *   only at AVAILABLE, and an administrator may unblock or add the MP meanwhile.
 * Polls back off from 2 s to 10 s; with a fleet, the client's shared limiter spaces them further
 * (first come, first served), so the run stays within the service's limit however many MPs wait.
 */

export interface ConnectionProgress {
  hostname: string;
  /** Requests sent so far for this MP. */
  polls: number;
  elapsedMs: number;
  /** What the last answer said, when the last poll got one. */
  status?: ConnectionStatus | undefined;
  /** Why the last poll failed, when it did (it is retried). */
  failure?: { code: string; message: string } | undefined;
  nextPollInMs: number;
}

export interface WaitUntilConnectedOptions {
  /** `service.wait_connected_s`. */
  waitS: number;
  /** Ends the wait early (SIGTERM, Ctrl-C): it then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: ConnectionProgress) => void) | undefined;
  /** Delay after the first poll, and the most between two polls; default 2 000 and 10 000 ms. */
  backoff?: { firstMs: number; maxMs: number } | undefined;
}

const DEFAULT_BACKOFF = { firstMs: 2_000, maxMs: 10_000 } as const;
/**
 * The last poll leaves this much of the wait for its answer; after it the wait counts as spent
 * (no later poll could be answered within it), so outcomes say the configured wait.
 */
const LAST_POLL_MS = 1_000;

/** Errors a later poll may not see again. */
const RETRIED: ReadonlySet<string> = new Set([
  ErrorCode.ServiceInternalError,
  ErrorCode.ServiceUnreachable,
  ErrorCode.ServiceTimeout,
  ErrorCode.ServiceRateLimited,
]);

/** Also a 502, 503 or 504 (a proxy or load balancer in front of the service); not a 405 or 409. */
function isRetried(error: unknown): boolean {
  if (!isMpprovError(error)) return false;
  if (RETRIED.has(error.code)) return true;
  return isServiceError(error) && error.code === ErrorCode.ServiceHttp && (error.data.status ?? 0) >= 500;
}

const BAD_TOKEN: ReadonlySet<string> = new Set([
  ErrorCode.ServiceNoCredentials,
  ErrorCode.ServiceBadCredentials,
  ErrorCode.ServiceUndecodableCredentials,
]);

const DEADLINE = Symbol('the post-check wait ran out');

export async function waitUntilConnected(
  client: DataApi,
  hostname: string,
  options: WaitUntilConnectedOptions,
): Promise<ConnectionOutcome> {
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const startedAt = Date.now();
  const waitMs = Math.max(0, options.waitS * 1000);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(DEADLINE), waitMs);
  const signal = options.signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, options.signal]);
  let polls = 0;
  let lastStatus: ConnectionStatus | undefined;
  let appliance: Appliance | undefined;
  let lastFailure: unknown;
  const facts = () => ({ hostname, waitedMs: Date.now() - startedAt, polls, lastStatus, appliance });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        const listed = await client.listAppliances({ hostname }, { signal, onSent: () => (polls += 1) });
        lastFailure = undefined;
        appliance = pick(listed, hostname);
        lastStatus = appliance?.connectionStatus ?? 'absent';
        if (lastStatus === 'AVAILABLE') return outcomeOfStatus({ ...facts(), lastStatus });
      } catch (error) {
        if (options.signal?.aborted === true) throw options.signal.reason;
        if (deadline.signal.aborted) break;
        const code = isMpprovError(error) ? error.code : ErrorCode.Internal;
        const reason = error instanceof Error ? error.message : String(error);
        if (BAD_TOKEN.has(code))
          return outcome(ConnectionOutcomeKind.BadToken, { ...facts(), errorCode: code, reason });
        if (code === ErrorCode.ServiceForbidden)
          return outcome(ConnectionOutcomeKind.NoPermission, { ...facts(), errorCode: code, reason });
        if (!isRetried(error))
          return outcome(ConnectionOutcomeKind.Unreachable, { ...facts(), errorCode: code, reason });
        lastFailure = error;
      }
      const remaining = startedAt + waitMs - Date.now();
      const delay = Math.min(backoff.firstMs * 1.5 ** attempt, backoff.maxMs, remaining - LAST_POLL_MS);
      options.onProgress?.({ ...progressOf(facts(), lastFailure), nextPollInMs: Math.max(0, delay) });
      if (delay <= 0) break;
      try {
        await sleep(delay, undefined, { signal });
      } catch {
        if (options.signal?.aborted === true) throw options.signal.reason;
        break;
      }
    }
    return finalOutcome({ ...facts(), waitedMs: waitMs }, lastFailure);
  } finally {
    clearTimeout(timer);
  }
}

/** The wait ran out: what the service last said, or why it could not say. */
function finalOutcome(facts: OutcomeFacts, lastFailure: unknown): ConnectionOutcome {
  if (lastFailure !== undefined) {
    const code = isMpprovError(lastFailure) ? lastFailure.code : ErrorCode.Internal;
    const said =
      facts.lastStatus === undefined
        ? ''
        : facts.lastStatus === 'absent'
          ? '; before that it listed no such MP'
          : `; it last said ${statusText(facts.lastStatus)}`;
    const reason = `${failureText(lastFailure)}${said}`;
    return outcome(ConnectionOutcomeKind.Unreachable, { ...facts, errorCode: code, reason });
  }
  if (facts.lastStatus !== undefined) return outcomeOfStatus({ ...facts, lastStatus: facts.lastStatus });
  if (facts.polls === 0) return outcome(ConnectionOutcomeKind.Unchecked, facts);
  return outcome(ConnectionOutcomeKind.Unreachable, {
    ...facts,
    errorCode: ErrorCode.ServiceTimeout,
    reason: `no answer within the wait of ${Math.round(facts.waitedMs / 1000)} s`,
  });
}

/**
 * The MP among the answer's entries: hostnames compare without case (DNS), and an entry of
 * another hostname (a service that searches loosely) does not count. If the hostname is listed
 * more than once (in two organizations), an AVAILABLE one wins.
 */
function pick(listed: readonly Appliance[], hostname: string): Appliance | undefined {
  const wanted = hostname.toLowerCase();
  const same = listed.filter((entry) => entry.hostname.toLowerCase() === wanted);
  return same.find((entry) => entry.connectionStatus === 'AVAILABLE') ?? same[0];
}

function progressOf(facts: OutcomeFacts, lastFailure: unknown): Omit<ConnectionProgress, 'nextPollInMs'> {
  const failure =
    lastFailure === undefined
      ? undefined
      : {
          code: isMpprovError(lastFailure) ? lastFailure.code : ErrorCode.Internal,
          message: failureText(lastFailure),
        };
  return {
    hostname: facts.hostname,
    polls: facts.polls,
    elapsedMs: facts.waitedMs,
    status: failure === undefined ? facts.lastStatus : undefined,
    failure,
  };
}

/** A failure's sentence; anything thrown that is not an Error (never expected) is named as such. */
function failureText(failure: unknown): string {
  if (failure instanceof Error) return failure.message;
  return typeof failure === 'string' ? failure : 'an unexpected failure';
}
