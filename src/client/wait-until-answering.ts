import { setTimeout as sleep } from 'node:timers/promises';
import {
  DeviceError,
  DeviceHttpError,
  DeviceNotAnsweringError,
  DeviceResponseError,
  DeviceTimeoutError,
  DeviceUnreachableError,
  connectionProblemText,
  secondsText,
} from '../core/errors.js';
import { request, type DeviceConnection } from './device-request.js';

export interface WaitOptions {
  timeoutMs: number;
  /** After each failed attempt: time since the wait began, and why the attempt failed. */
  onAttempt?: (elapsedMs: number, reason: string) => void;
  signal?: AbortSignal;
}

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 2_000;
/** A cheap GET that every Admin API v1 device serves. */
const PROBE_PATH = '/interface/?config_state=active';

/**
 * After a restart or reboot: polls until the device answers the probe, 250 ms after the call and
 * then with pauses doubling to 2 s. Refused and reset connections, timeouts, 5xx and half-started web servers
 * are expected meanwhile. A wrong password, a TLS or pin failure (the device came back with
 * another certificate) or any other refusal ends the wait at once: waiting would not fix them.
 */
export async function waitUntilAnswering(connection: DeviceConnection, options: WaitOptions): Promise<void> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const { signal } = options;
  let delay = FIRST_DELAY_MS;
  let attempts = 0;
  let lastReason = 'no attempt was made';
  for (;;) {
    // The pause comes first: right after the 202 the device may still answer for a moment from
    // the old network state, and a probe that early would end the wait before the restart began.
    const wait = Math.min(delay, options.timeoutMs - elapsed());
    if (wait <= 0) break;
    try {
      await sleep(wait, undefined, signal === undefined ? undefined : { signal });
    } catch (error) {
      throw aborted(signal) ? signal?.reason : error;
    }
    delay = Math.min(delay * 2, MAX_DELAY_MS);
    signal?.throwIfAborted();
    const remaining = options.timeoutMs - elapsed();
    if (remaining <= 0) break;
    attempts += 1;
    try {
      await request(connection, {
        method: 'GET',
        path: PROBE_PATH,
        once: true,
        timeoutMs: Math.max(1, Math.min(connection.requestTimeoutMs, Math.ceil(remaining))),
        signal,
      });
      return;
    } catch (error) {
      if (aborted(signal) || !stillComingBack(error)) throw error;
      lastReason = briefReason(error);
      options.onAttempt?.(Math.round(elapsed()), lastReason);
    }
  }
  throw new DeviceNotAnsweringError({ url: connection.url, waitedMs: options.timeoutMs, attempts, lastReason });
}

/** Not `signal.aborted` inline: TypeScript would keep its narrowing from before an await. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function stillComingBack(error: unknown): error is DeviceError {
  if (error instanceof DeviceUnreachableError || error instanceof DeviceTimeoutError || error instanceof DeviceResponseError) return true;
  return error instanceof DeviceHttpError && (error.data.status ?? 0) >= 500;
}

/** `connection refused`, `timed out after 2 s`, `HTTP 503`: the part of a failure worth repeating. */
function briefReason(error: DeviceError): string {
  if (error instanceof DeviceUnreachableError) return connectionProblemText(error.data);
  if (error instanceof DeviceTimeoutError) {
    return error.data.phase === 'connect'
      ? `no connection within ${secondsText(error.data.timeoutMs)}`
      : `no answer within ${secondsText(error.data.timeoutMs)}`;
  }
  if (error instanceof DeviceHttpError) return `HTTP ${error.data.status}`;
  return error.message;
}
