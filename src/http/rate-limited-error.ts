import { ErrorCode } from '../core/errors.js';
import {
  describeOperation,
  forPeer,
  serviceAt,
  statusSaid,
  TransportError,
  type Peer,
  type TransportErrorData,
} from './transport-error.js';

export interface RateLimitedErrorData extends TransportErrorData {
  attempts: number;
  /** How long the last answer's Retry-After asked to wait (retryAfterMs), when the caller kept it. */
  retryAfterMs?: number | undefined;
}

/** 429 on every attempt, each Retry-After waited out in between. */
export class RateLimitedError extends TransportError<RateLimitedErrorData> {
  constructor(peer: Peer, data: RateLimitedErrorData, options?: { cause?: unknown }) {
    const operation = describeOperation(data);
    super(
      peer,
      forPeer(peer, ErrorCode.DeviceRateLimited, ErrorCode.ServiceRateLimited),
      forPeer(
        peer,
        `the device still refused ${operation} as too many requests (HTTP 429) after ${data.attempts} attempts: ` +
          (data.deviceMessage ?? '(the device gave no reason)'),
        `${serviceAt(data)} still refused ${operation} as too many requests (${statusSaid(data)}) after ${data.attempts} attempts`,
      ),
      data,
      options,
    );
    this.name = 'RateLimitedError';
  }
}
