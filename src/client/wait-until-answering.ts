import type { DeviceInterface } from '../admin-api/device-interface.js';
import { secondsText } from '../core/errors.js';
import {
  connectionProblemText,
  RateLimitedError,
  ResponseError,
  TimeoutError,
  UnreachableError,
} from '../http/index.js';
import { DeviceHttpError, DeviceNotAnsweringError, isDeviceError, type DeviceError } from './device-errors.js';
import { knockRefusal, refusedByKnock, type DeviceConnection } from './device-request.js';
import { listInterfaces, listRequest } from './interface-endpoints.js';
import { knockIntervalMs, ProbeCadence, probeIntervalMs } from './retry-policy.js';

export interface WaitOptions {
  timeoutMs: number;
  /** After each failed probe: time since the wait began, why it failed, and the failure itself. */
  onAttempt?: (elapsedMs: number, reason: string, failure: DeviceError) => void;
  signal?: AbortSignal;
  /**
   * Whether an answer (the active view) ends the wait; default: any answer does. A restart's wait
   * passes "shows the new configuration", so an answer from before the outage does not end it.
   */
  until?: (active: DeviceInterface[]) => boolean;
}

/** `held`: its knock ended after a 429 came whose Retry-After had not passed; nothing was asked. */
type ProbeOutcome = { view: DeviceInterface[] } | { failure: unknown } | { held: true };

/**
 * After a restart or reboot: probes the active view (`GET /interface/?config_state=active`, a
 * cheap GET every Admin API v1 device serves) until an answer satisfies `until`. A probe is one
 * attempt, never retried inside (the next probe is the retry); one starts every 50 ms (the first
 * at once with `until`, else one interval after the call), 1 s apart once half the wait has passed
 * (retry-policy.ts, ProbeCadence). A probe that hangs does not hold the next one back: each has its own socket and
 * deadline. Refused and reset connections, timeouts, 5xx and half-started web servers are expected
 * meanwhile, and so is a 429: no probe starts before its Retry-After has passed. A wrong password, a TLS or pin failure (the device came back with another
 * certificate) or any other refusal ends the wait at once: waiting would not fix them.
 * A probe of a device addressed by IP knocks first (a bare TCP connect): a refusal is its failure,
 * and while the port refuses the next knock comes after 5 ms, not 50 (retry-policy.ts).
 * Returns the active view that ended the wait: the caller's verification needs no request of its own.
 */
export async function waitUntilAnswering(
  connection: DeviceConnection,
  options: WaitOptions,
): Promise<DeviceInterface[]> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const { signal, timeoutMs } = options;
  // Every probe still under way when the wait ends (answered, failed, timed out, stopped) is cut.
  const done = new AbortController();
  const probeSignal = signal === undefined ? done.signal : AbortSignal.any([done.signal, signal]);
  const inFlight = new Map<number, Promise<[number, ProbeOutcome]>>();
  const refused: { failure?: unknown } = {};
  let attempts = 0;
  let lastReason = 'no attempt was made';
  // Right after the 202 the device may still answer for a moment from the old network state: a
  // plain wait pauses first, or that answer would end it before the restart began. With `until`
  // such an answer ends nothing, and probing at once sees a short outage that a first pause
  // could miss entirely.
  let nextStart: number = options.until === undefined ? ProbeCadence.intervalMs : 0;
  // While the port refuses (the last probe's knock said so, and none is under way): the next
  // knock after knockIntervalMs, sooner than the cadence (retry-policy.ts).
  let refusedAt: number | undefined;
  // The end of the last 429's Retry-After: nothing starts before it, a knock neither (a refusal
  // seen meanwhile, from a probe started before the 429, must not bring the next one forward).
  let askAgainAt = 0;
  const dueAt = (now: number): number => {
    if (refusedAt === undefined || inFlight.size > 0) return nextStart;
    const knockPause = knockIntervalMs(now, timeoutMs, waitsUnderWay);
    return knockPause === undefined ? nextStart : Math.max(askAgainAt, Math.min(nextStart, refusedAt + knockPause));
  };
  waitsUnderWay += 1;
  try {
    for (;;) {
      const now = elapsed();
      if (now >= timeoutMs && inFlight.size === 0) break;
      if (now >= dueAt(now) && now < timeoutMs && inFlight.size < ProbeCadence.maxInFlight) {
        attempts += 1;
        const id = attempts;
        const remaining = timeoutMs - now;
        inFlight.set(
          id,
          probe(
            connection,
            Math.max(1, Math.min(ProbeCadence.probeTimeoutMs, connection.requestTimeoutMs, Math.ceil(remaining))),
            probeSignal,
            refused,
            () => elapsed() >= askAgainAt,
          ).then((o) => [id, o]),
        );
        // Start to start: a probe that takes 150 ms does not push the next one to 350 ms. A knock
        // that came before its time starts the count again from now.
        nextStart = Math.max(Math.min(nextStart, now) + probeIntervalMs(now, timeoutMs), now);
        refusedAt = undefined;
        continue;
      }
      const pause = Math.max(0, Math.min(dueAt(now), timeoutMs) - now);
      // With every slot taken (probes hanging) only a settled one can let the next start: no timer,
      // which would wake the loop every millisecond for nothing.
      const waitForProbe = inFlight.size >= ProbeCadence.maxInFlight || (inFlight.size > 0 && now >= timeoutMs);
      // The wait's own signal, not the caller's: a caller's signal is shared (the agent's stop, by
      // every device of every job), and a listener on it per wait crossed Node's limit of ten.
      const settled = await raceWith([...inFlight.values()], waitForProbe ? undefined : pause, probeSignal);
      if (settled === undefined) continue;
      const [id, outcome] = settled;
      inFlight.delete(id);
      if ('view' in outcome) {
        refusedAt = undefined;
        if (options.until === undefined || options.until(outcome.view)) return outcome.view;
        lastReason = 'it answered, but not yet with the new configuration';
        continue;
      }
      if ('held' in outcome) continue;
      const { failure } = outcome;
      if (aborted(signal)) throw signal?.reason;
      if (!stillComingBack(failure)) throw failure;
      refusedAt = refusedByKnock(failure) ? elapsed() : undefined;
      // A 429 says when to ask again: no probe before then (a device that counts requests is not
      // helped by twenty a second).
      if (failure instanceof RateLimitedError) {
        askAgainAt = Math.max(askAgainAt, elapsed() + (failure.data.retryAfterMs ?? 0));
        nextStart = Math.max(nextStart, askAgainAt);
      }
      lastReason = briefReason(failure);
      options.onAttempt?.(Math.round(elapsed()), lastReason, failure);
    }
  } finally {
    waitsUnderWay -= 1;
    done.abort();
  }
  throw new DeviceNotAnsweringError({ url: connection.url, waitedMs: timeoutMs, attempts, lastReason });
}

/** Restart waits under way in this process (a fleet runs many): their knocks share one budget. */
let waitsUnderWay = 0;

/** One attempt at the active view on a socket of its own (when the connection offers one); a knock first. */
async function probe(
  connection: DeviceConnection,
  timeoutMs: number,
  signal: AbortSignal,
  refused: { failure?: unknown },
  mayAsk: () => boolean,
): Promise<ProbeOutcome> {
  // Before any HTTP client is made: a refused knock is the whole probe. Every refusal of a wait
  // says the same, so one failure stands for them all (an error and its stack for each knock
  // was most of a knock's CPU).
  const knockedAt = performance.now();
  const refusal = await connection.knock?.(timeoutMs, signal);
  if (refusal !== undefined)
    return {
      failure: (refused.failure ??= knockRefusal(connection, refusal, { ...listRequest('active'), timeoutMs })),
    };
  // A 429 that came while this knock was out holds the request as it holds new probes.
  if (!mayAsk()) return { held: true };
  // The probe's time is knock and request together: a knock that got no answer at all (a device
  // dropping the SYN) leaves the request the rest, so the wait still ends at its timeout.
  const left = Math.max(1, Math.round(timeoutMs - (performance.now() - knockedAt)));
  const own = connection.openProbe?.(left);
  const probing: DeviceConnection =
    own === undefined
      ? connection
      : { ...connection, dispatcher: own, connectTimeoutMs: Math.min(left, connection.connectTimeoutMs) };
  try {
    return { view: await listInterfaces(probing, 'active', { once: true, timeoutMs: left, signal }) };
  } catch (failure) {
    return { failure };
  } finally {
    // destroy, not close: a connect still hanging must not outlive its probe.
    void own?.destroy().catch(() => undefined);
  }
}

/**
 * The first probe to settle, or undefined after `pauseMs` (never, when undefined); rejects when
 * `signal` aborts. A plain timer and listener, removed after: this runs for every knock (every
 * 10 ms of an outage), where an AbortController, AbortSignal.any and a promise timer each time
 * were a third of the wait's CPU.
 */
async function raceWith<T>(
  probes: Promise<T>[],
  pauseMs: number | undefined,
  signal: AbortSignal | undefined,
): Promise<T | undefined> {
  signal?.throwIfAborted();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const waits: Promise<T | undefined>[] = [...probes];
  if (pauseMs !== undefined)
    waits.push(new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), pauseMs))));
  if (signal !== undefined) {
    waits.push(
      new Promise<never>((_resolve, reject) => {
        onAbort = () => reject(signal.reason as Error);
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    );
  }
  try {
    return await Promise.race(waits);
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
  }
}

/** Not `signal.aborted` inline: TypeScript would keep its narrowing from before an await. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function stillComingBack(error: unknown): error is DeviceError {
  if (!isDeviceError(error)) return false;
  if (
    error instanceof UnreachableError ||
    error instanceof TimeoutError ||
    error instanceof ResponseError ||
    error instanceof RateLimitedError
  )
    return true;
  return error instanceof DeviceHttpError && (error.data.status ?? 0) >= 500;
}

/** `connection refused`, `timed out after 2 s`, `HTTP 503`: the part of a failure worth repeating. */
function briefReason(error: DeviceError): string {
  if (error instanceof UnreachableError) return connectionProblemText(error.data);
  if (error instanceof TimeoutError) {
    return error.data.phase === 'connect'
      ? `no connection within ${secondsText(error.data.timeoutMs)}`
      : `no answer within ${secondsText(error.data.timeoutMs)}`;
  }
  if (error instanceof DeviceHttpError) return `HTTP ${error.data.status}`;
  if (error instanceof RateLimitedError) {
    const wait = error.data.retryAfterMs;
    return `HTTP 429 (too many requests)${wait === undefined ? '' : `: the device asks to wait ${secondsText(wait)}`}`;
  }
  return error.message;
}
