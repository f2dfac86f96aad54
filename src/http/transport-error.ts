import { MpprovError, type ErrorCode } from '../core/errors.js';

/**
 * The base of every error of an exchange with a peer over HTTPS: the device's Admin API or the
 * monitoring service's data API. Each subclass builds its one sentence from its data, so the
 * sentence and the data cannot disagree; `data` is plain (URL, operation, what the peer said) and
 * never holds a password, a token or a header: callers put names of things in it, never values.
 */

export type Peer = 'device' | 'service';

/** The request under way. `path` is relative to the API's base (/api/v1, or the service URL). */
export interface TransportOperation {
  method: string;
  path: string;
  /** What the request is about when the path does not say it, e.g. `eth1 inet`. */
  subject?: string | undefined;
}

export interface TransportErrorData extends Partial<TransportOperation> {
  /** The peer: a device's `https://host:port`, or the service's base URL as configured. */
  url: string;
  status?: number | undefined;
  /** A device's own sentence (`error` of its JSON answer), when it gave one (one line, bounded). */
  deviceMessage?: string | undefined;
  /** The `message` of the service's error answer, when it gave one (one line, bounded). */
  serviceMessage?: string | undefined;
}

export class TransportError<D extends TransportErrorData = TransportErrorData> extends MpprovError {
  readonly peer: Peer;
  readonly data: D;

  constructor(peer: Peer, code: ErrorCode, message: string, data: D, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'TransportError';
    this.peer = peer;
    this.data = data;
  }
}

/** `POST /interface/ (eth1 inet)` */
export function describeOperation(operation: Partial<TransportOperation>): string {
  const base = `${operation.method ?? '?'} ${operation.path ?? '?'}`;
  return operation.subject === undefined ? base : `${base} (${operation.subject})`;
}

/** The one of two values that belongs to `peer`: a code, a sentence, a name. */
export function forPeer<T>(peer: Peer, device: T, service: T): T {
  return peer === 'device' ? device : service;
}

/** `the service at https://service.example/api`: how service sentences name their peer. */
export const serviceAt = (data: TransportErrorData): string => `the service at ${data.url}`;

/** `HTTP 401 "Bad credentials"`: the status and, when given, the service's own words. */
export function statusSaid(data: TransportErrorData): string {
  return data.serviceMessage === undefined
    ? `HTTP ${data.status ?? '?'}`
    : `HTTP ${data.status ?? '?'} "${data.serviceMessage}"`;
}
