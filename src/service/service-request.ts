import type { Pool } from 'undici';
import type { z } from 'zod';
import { secondsText } from '../core/errors.js';
import {
  RateLimitedError,
  retryAfterMs,
  sendRequest,
  type Outcome,
  type RawAnswer,
  type TransportErrorData,
} from '../http/index.js';
import type { Priority, RateLimiter } from './rate-limiter.js';
import { readAnswer, readStatus, serviceMessageOf } from './service-answer.js';
import { serviceAuthorization } from './service-authorization.js';
import type { ServiceOperation } from './service-errors.js';
import type { ServiceCredentials } from './service-settings.js';

/**
 * The one request() every data API endpoint goes through: a token from the shared rate limiter,
 * the Authorization and Accept headers, src/http's one exchange (deadline, capped body, typed
 * failures), and a 429 waited out (Retry-After, for every caller of the limiter). Other failures
 * are not retried here: the post-check decides what is worth another poll.
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
  /** Default GET. */
  method?: ServiceOperation['method'] | undefined;
  /** Relative to the base URL, with the query: `/v3/appliance?hostname=mp1`. */
  path: string;
  /** Sent as JSON; holds no secret (the service's data API bodies never do). */
  body?: unknown;
  /** Rounds that many devices wait on go before single writes queued earlier (rate-limiter.ts). */
  priority?: Priority | undefined;
  signal?: AbortSignal | undefined;
  /** Called each time the request leaves, after its rate-limit turn came. */
  onSent?: (() => void) | undefined;
}

export async function request<T extends z.ZodType>(
  connection: ServiceConnection,
  req: ServiceRequest,
  schema: T,
): Promise<z.infer<T>> {
  const { answer, data } = await answerOf(connection, req);
  return readAnswer(answer, schema, data, connection.credentials);
}

/**
 * For an endpoint whose answer names no body (DELETE /v3/observer: "200"): any 2xx is the answer,
 * whatever body came with it or none; an error status is the same ServiceStatusError as anywhere.
 */
export async function requestWithoutBody(connection: ServiceConnection, req: ServiceRequest): Promise<void> {
  const { answer, data } = await answerOf(connection, req);
  readStatus(answer, data, connection.credentials);
}

/** The exchange, its 429s waited out: the first answer of another status, to be read by the caller. */
async function answerOf(
  connection: ServiceConnection,
  req: ServiceRequest,
): Promise<{ answer: RawAnswer; data: TransportErrorData }> {
  const operation: ServiceOperation = { method: req.method ?? 'GET', path: req.path };
  const data = { url: connection.url, ...operation };
  let rateLimited = 0;
  for (;;) {
    const turn = await connection.limiter.acquire(req.signal, req.priority);
    let outcome: Outcome;
    try {
      req.onSent?.();
      outcome = await exchange(connection, req, operation);
    } finally {
      turn.release();
    }
    if ('failure' in outcome) throw outcome.failure;
    if (outcome.answer.status !== 429) return { answer: outcome.answer, data };
    rateLimited += 1;
    const serviceMessage = serviceMessageOf(outcome.answer, connection.credentials);
    if (rateLimited >= connection.rateLimitedAttempts) {
      throw new RateLimitedError('service', { ...data, status: 429, serviceMessage, attempts: rateLimited });
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

function exchange(connection: ServiceConnection, req: ServiceRequest, operation: ServiceOperation): Promise<Outcome> {
  return sendRequest({
    peer: 'service',
    dispatcher: connection.dispatcher,
    url: connection.url,
    operation,
    wirePath: `${connection.basePath}${req.path}`,
    headers: {
      accept: 'application/json',
      authorization: serviceAuthorization(connection.credentials),
      ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: req.body === undefined ? undefined : JSON.stringify(req.body),
    timeoutMs: connection.requestTimeoutMs,
    connectTimeoutMs: connection.connectTimeoutMs,
    maxBodyBytes: connection.maxBodyBytes,
    signal: req.signal,
  });
}
