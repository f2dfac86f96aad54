import { ErrorCode } from '../core/errors.js';
import { describeOperation, forPeer, TransportError, type Peer, type TransportErrorData } from './transport-error.js';

export const ConnectionProblem = {
  Refused: 'refused',
  Reset: 'reset',
  Closed: 'closed',
  HostUnreachable: 'host-unreachable',
  NetworkUnreachable: 'network-unreachable',
  NameNotFound: 'name-not-found',
  TimedOut: 'timed-out',
  Other: 'other',
} as const;
export type ConnectionProblem = (typeof ConnectionProblem)[keyof typeof ConnectionProblem];

export interface UnreachableErrorData extends TransportErrorData {
  problem: ConnectionProblem;
  /** Node's code (ECONNREFUSED, UND_ERR_SOCKET, ...). */
  socketCode?: string | undefined;
  /** False when the connection failed before the request left: the peer did not see it. */
  requestSent: boolean;
}

const CONNECTION_TEXT: Record<ConnectionProblem, string> = {
  refused: 'connection refused',
  reset: 'connection reset',
  closed: 'the device closed the connection',
  'host-unreachable': 'host unreachable',
  'network-unreachable': 'network unreachable',
  'name-not-found': 'host name not found',
  'timed-out': 'connection timed out',
  other: 'connection failed',
};

/** `connection refused`, `host unreachable`, ...: the problem as the sentences say it. */
export function connectionProblemText(data: Pick<UnreachableErrorData, 'problem' | 'socketCode'>): string {
  return data.problem === ConnectionProblem.Other && data.socketCode !== undefined
    ? `connection failed (${data.socketCode})`
    : CONNECTION_TEXT[data.problem];
}

export class UnreachableError extends TransportError<UnreachableErrorData> {
  constructor(peer: Peer, data: UnreachableErrorData, options?: { cause?: unknown }) {
    super(
      peer,
      forPeer(peer, ErrorCode.DeviceUnreachable, ErrorCode.ServiceUnreachable),
      sentence(peer, data),
      data,
      options,
    );
    this.name = 'UnreachableError';
  }
}

function sentence(peer: Peer, data: UnreachableErrorData): string {
  const what = connectionProblemText(data);
  if (!data.requestSent || data.method === undefined) return `cannot reach ${data.url}: ${what}`;
  const lost = `lost the connection to ${data.url} during ${describeOperation(data)}: ${what}`;
  // A write whose answer was lost may or may not have taken effect: the technician must know.
  return data.method === 'GET' ? lost : `${lost}; the ${peer} may or may not have applied it`;
}
