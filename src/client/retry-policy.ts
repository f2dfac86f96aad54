import { ConnectionProblem, DeviceTimeoutError, DeviceUnreachableError } from '../core/errors.js';

/**
 * When a failed exchange may be sent again. A GET changes nothing, so it is retried on refused,
 * reset or closed connections and on timeouts. A POST, PUT or DELETE that may have reached the
 * device is never sent twice: only a connection refused (nothing was sent) or a 429 (the device
 * did not act on it) allows another attempt.
 */

export const RetryLimits = {
  /** Attempts at one GET on connection failures and timeouts. */
  getAttempts: 3,
  /** Attempts at a write whose connection was refused. */
  refusedAttempts: 3,
  /** Attempts while the device answers 429. */
  rateLimitedAttempts: 5,
  firstDelayMs: 250,
  maxDelayMs: 2_000,
  /** Retry-After beyond this is capped: a device asking for minutes would stall a whole run. */
  maxRetryAfterMs: 60_000,
  /** When a 429 comes without a usable Retry-After. */
  defaultRetryAfterMs: 1_000,
} as const;

const RETRIED_ON_GET: ReadonlySet<ConnectionProblem> = new Set([
  ConnectionProblem.Refused,
  ConnectionProblem.Reset,
  ConnectionProblem.Closed,
  ConnectionProblem.TimedOut,
]);

/** Whether attempt number `attempt` (1-based), which failed with `error`, may be followed by another. */
export function mayRetry(method: string, error: unknown, attempt: number): boolean {
  if (method === 'GET') {
    if (attempt >= RetryLimits.getAttempts) return false;
    if (error instanceof DeviceTimeoutError) return true;
    return error instanceof DeviceUnreachableError && RETRIED_ON_GET.has(error.data.problem);
  }
  return (
    attempt < RetryLimits.refusedAttempts &&
    error instanceof DeviceUnreachableError &&
    error.data.problem === ConnectionProblem.Refused &&
    !error.data.requestSent
  );
}

/** 250 ms, 500 ms, 1 s, 2 s, 2 s ... */
export function backoffMs(attempt: number): number {
  return Math.min(RetryLimits.firstDelayMs * 2 ** (attempt - 1), RetryLimits.maxDelayMs);
}

/** Retry-After in seconds or as an HTTP date (RFC 9110 10.2.3), capped. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return RetryLimits.defaultRetryAfterMs;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const date = Date.parse(trimmed);
    if (Number.isNaN(date)) return RetryLimits.defaultRetryAfterMs;
    ms = Math.max(0, date - now);
  }
  return Math.min(ms, RetryLimits.maxRetryAfterMs);
}
