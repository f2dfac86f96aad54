import { ConnectionProblem, TimeoutError, UnreachableError } from '../http/index.js';

/**
 * When a failed exchange may be sent again. A GET changes nothing, so it is retried on refused,
 * reset or closed connections and on timeouts. A POST, PUT or DELETE that may have reached the
 * device is never sent twice: only a connection refused (nothing was sent) or a 429 (the device
 * did not act on it) allows another attempt. How long a 429 asks to wait is src/http's retryAfterMs.
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
    if (error instanceof TimeoutError) return true;
    return error instanceof UnreachableError && RETRIED_ON_GET.has(error.data.problem);
  }
  return (
    attempt < RetryLimits.refusedAttempts &&
    error instanceof UnreachableError &&
    error.data.problem === ConnectionProblem.Refused &&
    !error.data.requestSent
  );
}

/** 250 ms, 500 ms, 1 s, 2 s, 2 s ... */
export function backoffMs(attempt: number): number {
  return Math.min(RetryLimits.firstDelayMs * 2 ** (attempt - 1), RetryLimits.maxDelayMs);
}

/**
 * How waitUntilAnswering probes a device that is restarting. The outage is expected and its end
 * is what the technician waits for, so there is no exponential backoff while it lasts: a probe
 * starts every `intervalMs`, each a single attempt on a connection of its own with a short
 * deadline, so the first one after the device is back answers within about one interval.
 *
 * - 50 ms: notices the return at most ~50 ms late (25 ms on average), where 1 s polling is
 *   ~500 ms late on average. The late part is pure overhead of an apply (the floor of the whole
 *   run is ~150 ms). A full probe costs 1-1.5 ms of CPU (an HTTP client, a TLS socket, the
 *   failure classified) even when refused, one before the device goes down a TLS handshake too. At 100 ms (the
 *   earlier choice) a device whose outage ends just after a probe, which a restart timed in whole
 *   tenths of a second does every time, was seen a full 100 ms late; at 200 ms, 100 ms on average.
 *   While probes hang, `maxInFlight` holds the rate down.
 * - Knocks, for a device addressed by IP: while its port refuses, a bare TCP connect tells so for
 *   ~0.1 ms of CPU, and the next comes after `knockIntervalMs` (5 ms: the return seen ~2.5 ms late
 *   on average), a full probe once a knock is accepted. The knocks of all waits of a process share
 *   `knocksPerSecond` up to 20 waits; more each knock every 50 ms (`intervalMs`), so a fleet
 *   restarting together knocks no more often than it probed (32 devices: 640 a second).
 * - `probeTimeoutMs` bounds connect + TLS + headers of one probe: a device on the LAN answers in
 *   tens of milliseconds, a half-open one never; its probe is dropped after 1 s while the next
 *   ones keep their cadence (up to `maxInFlight` at once, each on its own socket).
 * - After half the wait has passed without an answer the outage is no longer the expected one:
 *   probes slow to one per `lateIntervalMs`.
 */
export const ProbeCadence = {
  intervalMs: 50,
  // While the device's port refuses, a knock (a bare TCP connect, ~0.1 ms of CPU) every 5 ms:
  // the return is seen 2.5 ms late on average instead of 25 (at 10 ms, 5: the bench's late-after-up
  // median was 9-11 ms, the TCP connect, handshake and GET after the knock 4-6 of it). A device
  // restarting answers each SYN with a reset from its kernel; two hundred a second are nothing to it.
  knockIntervalMs: 5,
  // Knocks of all the waits of the process together, at most this many a second (~4 % of a core)
  // up to 20 waits: past that each keeps the probes' 50 ms, and the total grows as the probes'
  // did (32 devices restarting at once knock every 50 ms, 640 a second, as they probed before).
  knocksPerSecond: 400,
  lateIntervalMs: 1_000,
  probeTimeoutMs: 1_000,
  // Five at most: when handshakes slow down (a device coming up, a loaded machine) the cadence
  // gives way instead of piling up handshakes (32 waits would hold up to 640 at twenty a second).
  maxInFlight: 5,
} as const;

/** The pause from one probe's start to the next, `elapsedMs` into a wait of `waitMs`. */
export function probeIntervalMs(elapsedMs: number, waitMs: number): number {
  return elapsedMs < waitMs / 2 ? ProbeCadence.intervalMs : ProbeCadence.lateIntervalMs;
}

/**
 * The pause from a refused knock to the next one, with `waits` waits knocking in the process, or
 * undefined once half the wait has passed (then the late cadence holds).
 */
export function knockIntervalMs(elapsedMs: number, waitMs: number, waits: number): number | undefined {
  if (elapsedMs >= waitMs / 2) return undefined;
  const shared = (Math.max(1, waits) * 1000) / ProbeCadence.knocksPerSecond;
  return Math.min(ProbeCadence.intervalMs, Math.max(ProbeCadence.knockIntervalMs, shared));
}
