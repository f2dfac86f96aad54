import { ErrorCode, secondsText } from '../core/errors.js';
import { describeOperation, forPeer, TransportError, type Peer, type TransportErrorData } from './transport-error.js';

export interface TimeoutErrorData extends TransportErrorData {
  /** `connect`: no TCP/TLS connection in time; `response`: no complete answer in time. */
  phase: 'connect' | 'response';
  timeoutMs: number;
}

export class TimeoutError extends TransportError<TimeoutErrorData> {
  constructor(peer: Peer, data: TimeoutErrorData, options?: { cause?: unknown }) {
    const operation = describeOperation(data);
    const after = `timed out after ${secondsText(data.timeoutMs)}`;
    super(
      peer,
      forPeer(peer, ErrorCode.DeviceTimeout, ErrorCode.ServiceTimeout),
      data.phase === 'connect'
        ? `${operation} ${after} while connecting to ${data.url}`
        : // A device's sentences name it by the operation alone; the service's by its URL.
          forPeer(peer, `${operation} ${after}`, `${operation} to ${data.url} ${after}`),
      data,
      options,
    );
    this.name = 'TimeoutError';
  }
}
