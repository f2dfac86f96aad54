import type { Readable } from 'node:stream';
import type { Pool } from 'undici';
import type { z } from 'zod';
import { secondsText } from '../core/errors.js';
import { BodyTooLarge, readCappedText } from './capped-body.js';
import { classifyServiceFailure } from './classify-service-failure.js';
import type { RateLimiter } from './rate-limiter.js';
import { readAnswer, serviceMessageOf, type RawServiceAnswer } from './service-answer.js';
import { serviceAuthorization } from './service-authorization.js';
import { ServiceBodyTooLargeError, ServiceRateLimitedError, type ServiceOperation } from './service-errors.js';
import type { ServiceCredentials } from './service-settings.js';

/**
 * The one request() every data API endpoint goes through: a token from the shared rate limiter,
 * the Authorization and Accept headers, a deadline, the body read under its cap, a 429 waited out
 * (Retry-After, for every caller of the limiter), and every failure turned into one typed error.
 * Other failures are not retried here: the post-check decides what is worth another poll.
 */

export interface ServiceRetryInfo {
  path: string;
  attempt: number;
  reason: string;
  delayMs: number;
}

export interface ServiceConnection {
  /** The base URL as configured, without a trailing slash: `https://service.example/api`. */
  readonly url: string;
  /** The base URL's path, prefixed to every endpoint: `/api`. */
  readonly basePath: string;
  readonly dispatcher: Pool;
  readonly credentials: ServiceCredentials;
  readonly limiter: RateLimiter;
  readonly connectTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly maxBodyBytes: number;
  readonly rateLimitedAttempts: number;
  readonly onRetry?: ((info: ServiceRetryInfo) => void) | undefined;
}

export interface ServiceRequest {
  /** Relative to the base URL, with the query: `/v3/appliance?hostname=mp1`. */
  path: string;
  signal?: AbortSignal | undefined;
  /** Called each time the request leaves, after its rate-limit turn came. */
  onSent?: (() => void) | undefined;
}

export const RetryAfterLimits = {
  /** When a 429 comes without a usable Retry-After. */
  defaultMs: 1_000,
  /** A service asking for minutes would stall a whole run: capped. */
  maxMs: 60_000,
} as const;

type Outcome = { answer: RawServiceAnswer; retryAfter: string | string[] | undefined } | { failure: Error };

export async function request<T extends z.ZodType>(
  connection: ServiceConnection,
  req: ServiceRequest,
  schema: T,
): Promise<z.infer<T>> {
  const operation: ServiceOperation = { method: 'GET', path: req.path };
  const data = { url: connection.url, ...operation };
  let rateLimited = 0;
  for (;;) {
    const turn = await connection.limiter.acquire(req.signal);
    let outcome: Outcome;
    try {
      req.onSent?.();
      outcome = await exchange(connection, req, operation);
    } finally {
      turn.release();
    }
    if ('failure' in outcome) throw outcome.failure;
    if (outcome.answer.status !== 429) return readAnswer(outcome.answer, schema, data, connection.credentials);
    rateLimited += 1;
    const serviceMessage = serviceMessageOf(outcome.answer, connection.credentials);
    if (rateLimited >= connection.rateLimitedAttempts) {
      throw new ServiceRateLimitedError({ ...data, status: 429, serviceMessage, attempts: rateLimited });
    }
    const delayMs = retryAfterMs(outcome.retryAfter);
    // Everyone sharing the token is over the limit, not only this request: pause them all.
    connection.limiter.pauseUntil(Date.now() + delayMs);
    connection.onRetry?.({
      path: req.path,
      attempt: rateLimited,
      reason: `the service answered HTTP 429 (too many requests) and asks to wait ${secondsText(delayMs)}`,
      delayMs,
    });
  }
}

async function exchange(
  connection: ServiceConnection,
  req: ServiceRequest,
  operation: ServiceOperation,
): Promise<Outcome> {
  const timeoutMs = connection.requestTimeoutMs;
  const deadline = new AbortController();
  let deadlineFired = false;
  const timer = setTimeout(() => {
    deadlineFired = true;
    deadline.abort();
  }, timeoutMs);
  const signal = req.signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, req.signal]);
  try {
    const response = await connection.dispatcher.request({
      path: `${connection.basePath}${req.path}`,
      method: operation.method,
      headers: { accept: 'application/json', authorization: serviceAuthorization(connection.credentials) },
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const text = await readCappedText(
      response.body as unknown as Readable,
      connection.maxBodyBytes,
      response.headers['content-length'],
    );
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
    if (error instanceof BodyTooLarge) {
      return {
        failure: new ServiceBodyTooLargeError(
          { url: connection.url, ...operation, limitBytes: error.limitBytes },
          { cause: error },
        ),
      };
    }
    const failure = classifyServiceFailure(error, {
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

/** Retry-After in seconds or as an HTTP date (RFC 9110 10.2.3), capped. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || value === '') return RetryAfterLimits.defaultMs;
  let ms: number;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else {
    const date = Date.parse(value);
    if (Number.isNaN(date)) return RetryAfterLimits.defaultMs;
    ms = Math.max(0, date - now);
  }
  return Math.min(ms, RetryAfterLimits.maxMs);
}
