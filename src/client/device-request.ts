import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from 'undici';
import { Redactor } from '../core/redact.js';
import { Secret } from '../core/secret.js';
import { secondsText, type MpprovError } from '../core/errors.js';
import {
  classifyFailure,
  RateLimitedError,
  retryAfterMs,
  sendRequest,
  type Outcome,
  type TransportOperation,
} from '../http/index.js';
import { basicAuthorization } from './basic-authorization.js';
import { deviceSentence, interpretAnswer, type DeviceAnswer } from './device-answer.js';
import type { RetryInfo } from './device-target.js';
import { jsonBody } from './json-body.js';
import { backoffMs, mayRetry, RetryLimits } from './retry-policy.js';

/**
 * The one request() every endpoint goes through: Basic auth, JSON headers, the retry policy
 * (retry-policy.ts) around src/http's one exchange (deadline, capped body, typed failures).
 */

const API_PREFIX = '/api/v1';

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
  /**
   * A bare TCP connect to the device's port (refusedConnect): the refusal when nothing listens
   * there, else undefined. Only for a device addressed by IP (a name would be looked up for each).
   */
  readonly knock?: ((deadlineMs: number, signal?: AbortSignal) => Promise<Error | undefined>) | undefined;
  /** Every answer's Date header, with this machine's time at its arrival: the device's clock. */
  readonly onClock?: ((date: string, receivedAt: Date) => void) | undefined;
}

type RequestBody = { json: unknown } | { multipart: { bytes: Uint8Array; contentType: string } };

export interface DeviceRequest extends TransportOperation {
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

/** Failures a knock told (the port refused), as against a full exchange that met a refusal. */
const knockRefusals = new WeakSet<object>();

/** Whether `failure` is a refusal a knock told: the port is closed, knocking again soon is cheap. */
export function refusedByKnock(failure: unknown): boolean {
  return typeof failure === 'object' && failure !== null && knockRefusals.has(failure);
}

/**
 * The failure a knock's refusal stands for: the error `request` would have thrown had the full
 * exchange (`method` and `path`, `timeoutMs`) met the refused port itself.
 */
export function knockRefusal(
  connection: DeviceConnection,
  refusal: Error,
  asked: Pick<DeviceRequest, 'method' | 'path' | 'subject' | 'timeoutMs'>,
): MpprovError {
  const failure = classifyFailure(refusal, {
    peer: 'device',
    url: connection.url,
    operation: { method: asked.method, path: asked.path, subject: asked.subject },
    deadlineFired: false,
    requestTimeoutMs: asked.timeoutMs ?? connection.requestTimeoutMs,
    connectTimeoutMs: connection.connectTimeoutMs,
  });
  knockRefusals.add(failure);
  return failure;
}

export async function request(connection: DeviceConnection, asked: DeviceRequest): Promise<DeviceAnswer> {
  // The connection's signal cuts this request too, whatever signal the caller brought.
  const req: DeviceRequest = { ...asked, signal: eitherSignal(asked.signal, connection.signal) };
  req.signal?.throwIfAborted();
  const operation: TransportOperation = { method: req.method, path: req.path, subject: req.subject };
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
      const delay = retryAfterMs(outcome.retryAfter);
      if (req.once === true || rateLimited >= RetryLimits.rateLimitedAttempts) {
        const deviceMessage = deviceSentence(outcome.answer, redact);
        throw new RateLimitedError('device', {
          url: connection.url,
          ...operation,
          status: 429,
          deviceMessage,
          attempts: rateLimited,
          retryAfterMs: delay,
        });
      }
      const reason = `the device answered HTTP 429 (too many requests) and asks to wait ${secondsText(delay)}`;
      await pause(connection, req, failures + rateLimited, reason, delay);
      continue;
    }
    if (outcome.answer.date !== undefined) connection.onClock?.(outcome.answer.date, new Date());
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

function exchange(
  connection: DeviceConnection,
  req: DeviceRequest,
  operation: TransportOperation,
  body: EncodedBody | undefined,
): Promise<Outcome> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    authorization: basicAuthorization(connection.username, connection.password),
  };
  if (body !== undefined) headers['content-type'] = body.contentType;
  return sendRequest({
    peer: 'device',
    dispatcher: connection.dispatcher,
    url: connection.url,
    operation,
    wirePath: `${API_PREFIX}${req.path}`,
    headers,
    body: body?.bytes,
    timeoutMs: req.timeoutMs ?? connection.requestTimeoutMs,
    connectTimeoutMs: connection.connectTimeoutMs,
    signal: req.signal,
  });
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
