import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from 'undici';
import { Redactor } from '../core/redact.js';
import { Secret } from '../core/secret.js';
import { DeviceRateLimitedError, DeviceResponseError, secondsText, type DeviceOperation } from '../core/errors.js';
import { basicAuthorization } from './basic-authorization.js';
import { DeviceBodyTooLarge, MAX_DEVICE_BODY_BYTES, readCappedBody } from './capped-body.js';
import { classifyFailure } from './classify-failure.js';
import { deviceSentence, interpretAnswer, type DeviceAnswer, type RawAnswer } from './device-answer.js';
import type { RetryInfo } from './device-target.js';
import { jsonBody } from './json-body.js';
import { backoffMs, mayRetry, retryAfterMs, RetryLimits } from './retry-policy.js';

/**
 * The one request() every endpoint goes through: Basic auth, JSON headers, a deadline per
 * exchange, the retry policy (retry-policy.ts), and every failure turned into one typed error.
 */

export const API_PREFIX = '/api/v1';

export interface DeviceConnection {
  /** `https://host:port` */
  readonly url: string;
  readonly dispatcher: Client;
  readonly username: string;
  readonly password: Secret;
  readonly connectTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly onRetry?: ((info: RetryInfo) => void) | undefined;
  /** Cuts every request of the connection (ClientOptions.signal). */
  readonly signal?: AbortSignal | undefined;
  /**
   * A dispatcher of its own for one probe of waitUntilAnswering, whose connect gives up after
   * `timeoutMs`; the caller destroys it. Without it probes share `dispatcher`.
   */
  readonly openProbe?: ((timeoutMs: number) => Client) | undefined;
}

export type RequestBody = { json: unknown } | { multipart: { bytes: Uint8Array; contentType: string } };

export interface DeviceRequest extends DeviceOperation {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: RequestBody | undefined;
  /** Statuses that are answers for this endpoint, not failures (404 for getInterface). */
  answers?: readonly number[];
  /** One attempt only: waitUntilAnswering polls on its own. */
  once?: boolean;
  /** This exchange's deadline instead of requestTimeoutMs. */
  timeoutMs?: number;
  /** Cancels the request; it then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

type Outcome = { answer: RawAnswer; retryAfter: string | string[] | undefined } | { failure: Error };

export async function request(connection: DeviceConnection, asked: DeviceRequest): Promise<DeviceAnswer> {
  // The connection's signal cuts this request too, whatever signal the caller brought.
  const req: DeviceRequest = { ...asked, signal: eitherSignal(asked.signal, connection.signal) };
  req.signal?.throwIfAborted();
  const operation: DeviceOperation = { method: req.method, path: req.path, subject: req.subject };
  const body = encodeBody(req.body);
  const redactor = new Redactor(requestSecrets(connection, req.body));
  const redact = (text: string): string => redactor.text(text);
  let failures = 0;
  let rateLimited = 0;
  for (;;) {
    const outcome = await exchange(connection, req, operation, body);
    if ('failure' in outcome) {
      failures += 1;
      if (req.once === true || !mayRetry(req.method, outcome.failure, failures)) throw outcome.failure;
      await pause(connection, req, failures + rateLimited, outcome.failure.message, backoffMs(failures));
      continue;
    }
    if (outcome.answer.status === 429) {
      rateLimited += 1;
      if (req.once === true || rateLimited >= RetryLimits.rateLimitedAttempts) {
        const deviceMessage = deviceSentence(outcome.answer, redact);
        throw new DeviceRateLimitedError({
          url: connection.url,
          ...operation,
          status: 429,
          deviceMessage,
          attempts: rateLimited,
        });
      }
      const delay = retryAfterMs(outcome.retryAfter);
      const reason = `the device answered HTTP 429 (too many requests) and asks to wait ${secondsText(delay)}`;
      await pause(connection, req, failures + rateLimited, reason, delay);
      continue;
    }
    return interpretAnswer(outcome.answer, {
      url: connection.url,
      username: connection.username,
      operation,
      answers: req.answers ?? [],
      redact,
    });
  }
}

function eitherSignal(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : AbortSignal.any([a, b]);
}

/** The secrets this request carries: the password, its Basic pair, and every Secret in a JSON body. */
function requestSecrets(connection: DeviceConnection, body: RequestBody | undefined): Secret[] {
  const found = [connection.password, connection.password.prefixed(`${connection.username}:`)];
  const walk = (value: unknown): void => {
    if (value instanceof Secret) found.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(walk);
  };
  if (body !== undefined && 'json' in body) walk(body.json);
  return found;
}

interface EncodedBody {
  bytes: string | Uint8Array;
  contentType: string;
}

function encodeBody(body: RequestBody | undefined): EncodedBody | undefined {
  if (body === undefined) return undefined;
  if ('json' in body) return { bytes: jsonBody(body.json), contentType: 'application/json' };
  return body.multipart;
}

async function exchange(
  connection: DeviceConnection,
  req: DeviceRequest,
  operation: DeviceOperation,
  body: EncodedBody | undefined,
): Promise<Outcome> {
  const timeoutMs = req.timeoutMs ?? connection.requestTimeoutMs;
  const deadline = new AbortController();
  let deadlineFired = false;
  const timer = setTimeout(() => {
    deadlineFired = true;
    deadline.abort();
  }, timeoutMs);
  const signal = req.signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, req.signal]);
  const headers: Record<string, string> = {
    accept: 'application/json',
    authorization: basicAuthorization(connection.username, connection.password),
  };
  if (body !== undefined) headers['content-type'] = body.contentType;
  try {
    const response = await connection.dispatcher.request({
      path: `${API_PREFIX}${req.path}`,
      method: req.method,
      headers,
      body: body?.bytes ?? null,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const text = await readCappedBody(response.body, MAX_DEVICE_BODY_BYTES, response.headers['content-length']);
    const contentType = response.headers['content-type'];
    return {
      answer: {
        status: response.statusCode,
        contentType: Array.isArray(contentType) ? contentType[0] : contentType,
        text,
      },
      retryAfter: response.headers['retry-after'],
    };
  } catch (error) {
    if (req.signal?.aborted === true) throw req.signal.reason;
    if (error instanceof DeviceBodyTooLarge) {
      // Not retried: a device that sent this once will send it again.
      const detail = `a body longer than ${error.limitBytes} bytes (${error.limitBytes / 1024 / 1024} MiB), which was not read further`;
      throw new DeviceResponseError(
        { url: connection.url, ...operation, problem: 'too-large', detail },
        { cause: error },
      );
    }
    const failure = classifyFailure(error, {
      url: connection.url,
      operation,
      deadlineFired,
      requestTimeoutMs: timeoutMs,
      connectTimeoutMs: connection.connectTimeoutMs,
    });
    return { failure };
  } finally {
    clearTimeout(timer);
  }
}

async function pause(
  connection: DeviceConnection,
  req: DeviceRequest,
  attempt: number,
  reason: string,
  delayMs: number,
): Promise<void> {
  connection.onRetry?.({ method: req.method, path: req.path, attempt, reason, delayMs });
  try {
    await sleep(delayMs, undefined, req.signal === undefined ? undefined : { signal: req.signal });
  } catch (error) {
    if (req.signal?.aborted === true) throw req.signal.reason;
    throw error;
  }
}
