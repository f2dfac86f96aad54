import type { Dispatcher } from 'undici';
import type { MpprovError } from '../core/errors.js';
import type { RawAnswer } from './answer-text.js';
import { classifyFailure } from './classify-failure.js';
import { BodyOverCap, MAX_BODY_BYTES, readCappedBody } from './read-capped-body.js';
import { BodyTooLargeError } from './response-error.js';
import type { Peer, TransportOperation } from './transport-error.js';

/**
 * One HTTP exchange with a peer, whatever its API: a deadline of its own, the body read under its
 * cap, and every failure turned into one typed error naming the peer. Retries, credentials and
 * the meaning of a status are the endpoint layer's: this sends what it is given, once.
 */

export interface PeerRequest {
  peer: Peer;
  dispatcher: Pick<Dispatcher, 'request'>;
  /** The peer as messages name it. */
  url: string;
  /** As messages say it; `path` is relative to the API's base. */
  operation: TransportOperation;
  /** The path on the wire, with the API's base and the query. */
  wirePath: string;
  headers: Record<string, string>;
  /** Already encoded: secrets were revealed into these bytes by the endpoint layer, and only there. */
  body?: string | Uint8Array | undefined;
  timeoutMs: number;
  /** For the sentence of a connect timeout: the connector's own deadline. */
  connectTimeoutMs: number;
  maxBodyBytes?: number | undefined;
  /** Cancels the exchange; it then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** An answer (any status), or the failure that took its place; a body past the cap is thrown. */
export type Outcome = { answer: RawAnswer; retryAfter: string | string[] | undefined } | { failure: MpprovError };

export async function sendRequest(req: PeerRequest): Promise<Outcome> {
  const deadline = new AbortController();
  let deadlineFired = false;
  const timer = setTimeout(() => {
    deadlineFired = true;
    deadline.abort();
  }, req.timeoutMs);
  const signal = req.signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, req.signal]);
  try {
    const response = await settledByDeadline(
      req.dispatcher.request({
        path: req.wirePath,
        method: req.operation.method,
        headers: req.headers,
        body: req.body ?? null,
        signal,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
      }),
      signal,
    );
    const text = await readCappedBody(
      response.body,
      req.maxBodyBytes ?? MAX_BODY_BYTES,
      response.headers['content-length'],
    );
    const contentType = response.headers['content-type'];
    return {
      answer: {
        status: response.statusCode,
        contentType: Array.isArray(contentType) ? contentType[0] : contentType,
        text,
        date: Array.isArray(response.headers.date) ? response.headers.date[0] : response.headers.date,
      },
      retryAfter: response.headers['retry-after'],
    };
  } catch (error) {
    if (req.signal?.aborted === true) throw req.signal.reason;
    if (error instanceof BodyOverCap) {
      // Not retried: a peer that sent this once will send it again.
      throw new BodyTooLargeError(
        req.peer,
        { url: req.url, ...req.operation, limitBytes: error.limitBytes },
        {
          cause: error,
        },
      );
    }
    const failure = classifyFailure(error, {
      peer: req.peer,
      url: req.url,
      operation: req.operation,
      deadlineFired,
      requestTimeoutMs: req.timeoutMs,
      connectTimeoutMs: req.connectTimeoutMs,
    });
    return { failure };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `requesting`, or the abort of `signal` if that comes first. undici keeps a request waiting for
 * its connection deaf to its signal until the connect ends, and times connects out on its
 * half-second timer wheel: a device that drops the SYN held a request (and a restart wait) up to
 * half a second past its deadline. The request given up on is left to undici, which ends it at the
 * connect (aborted, as its signal says); an answer that still comes has its body discarded.
 */
async function settledByDeadline<T extends { body: { destroy(): unknown } }>(
  requesting: Promise<T>,
  signal: AbortSignal,
): Promise<T> {
  if (signal.aborted) {
    void requesting.then(
      (late) => late.body.destroy(),
      () => undefined,
    );
    throw signal.reason;
  }
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([requesting, aborted]);
  } catch (error) {
    if (signal.aborted)
      void requesting.then(
        (late) => late.body.destroy(),
        () => undefined,
      );
    throw error;
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}
