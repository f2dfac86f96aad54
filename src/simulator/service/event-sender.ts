import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import * as tls from 'node:tls';

/**
 * One event, POSTed once to a configured server: `Content-Type: application/json`, the event as
 * the body, a 2xx within the answer deadline is an answer; anything else (no connection, a TLS
 * failure, another status, the deadline) is not. Never retried, never redirected. A fresh
 * connection per event (no keep-alive), so a receiver that stopped is noticed on the next event.
 */

export type SendOutcome =
  | { outcome: 'answered'; status: number }
  | { outcome: 'refused'; status: number }
  | { outcome: 'timeout' }
  | { outcome: 'failed'; detail: string };

export interface SendOptions {
  /** The whole answer (status line and body) must come within this; the model's 10 s. */
  answerMs: number;
  /** The CAs an HTTPS receiver's certificate may come from; undefined: Node's default store. */
  ca: string[] | undefined;
  /** Aborts the attempt (the service is closing). */
  signal: AbortSignal;
}

/** A receiver's answer body is read and discarded up to this; more closes the connection. */
const ANSWER_BODY_LIMIT = 64 * 1024;

export function sendEvent(url: string, body: string, options: SendOptions): Promise<SendOutcome> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ outcome: 'failed', detail: 'the URL does not parse' });
  }
  if (options.signal.aborted) return Promise.resolve(CLOSED);
  return new Promise((resolve) => {
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const common = { method: 'POST', headers, agent: false } as const;
    const req =
      target.protocol === 'https:'
        ? httpsRequest(target, { ...common, ...(options.ca === undefined ? {} : { ca: options.ca }) }, onAnswer)
        : httpRequest(target, common, onAnswer);
    const deadline = setTimeout(() => settle({ outcome: 'timeout' }), options.answerMs);
    deadline.unref();
    const onAbort = () => settle(CLOSED);
    options.signal.addEventListener('abort', onAbort);
    let settled = false;
    req.once('error', (error: NodeJS.ErrnoException) => settle({ outcome: 'failed', detail: error.code ?? 'error' }));
    req.end(body);

    function settle(outcome: SendOutcome): void {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      options.signal.removeEventListener('abort', onAbort);
      req.destroy();
      resolve(outcome);
    }
    function onAnswer(res: IncomingMessage): void {
      const status = res.statusCode ?? 0;
      const finish = () =>
        settle(status >= 200 && status < 300 ? { outcome: 'answered', status } : { outcome: 'refused', status });
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > ANSWER_BODY_LIMIT) finish();
      });
      res.once('end', finish);
      res.once('error', finish);
    }
  });
}

const CLOSED: SendOutcome = { outcome: 'failed', detail: 'the simulated service closed' };

/** With an extra CA (--service-events-ca): that CA beside Node's default store, which `ca` would otherwise replace. */
export function eventReceiverCas(extraCaPem: string | undefined): string[] | undefined {
  if (extraCaPem === undefined) return undefined;
  return [...tls.rootCertificates, extraCaPem];
}
