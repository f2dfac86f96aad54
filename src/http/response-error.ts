import { ErrorCode } from '../core/errors.js';
import {
  describeOperation,
  forPeer,
  serviceAt,
  TransportError,
  type Peer,
  type TransportErrorData,
} from './transport-error.js';

export interface ResponseErrorData extends TransportErrorData {
  /**
   * `not-json`: the body is not JSON; `shape`: JSON of the wrong shape; `not-http`: not HTTP/1.1 at
   * all; `too-large`: the body went past the cap it is read under while streaming.
   */
  problem: 'not-json' | 'shape' | 'not-http' | 'too-large';
  /**
   * What was wrong: for not-json a phrase such as `a body that is not JSON (text/html): "<html>..."`
   * or `an empty body instead of JSON`; for shape the first schema issues; for not-http the
   * parser's reason; for too-large the cap the body went past.
   */
  detail: string;
  /** For too-large: the cap. */
  limitBytes?: number | undefined;
}

/** The peer answered, but not with what its API promises. */
export class ResponseError extends TransportError<ResponseErrorData> {
  constructor(peer: Peer, data: ResponseErrorData, options?: { cause?: unknown }) {
    super(peer, codeOf(peer, data), forPeer(peer, deviceSentence(data), serviceSentence(data)), data, options);
    this.name = 'ResponseError';
  }
}

/** The answer grew past the cap while streaming; reading stopped there and the connection was dropped. */
export class BodyTooLargeError extends ResponseError {
  constructor(peer: Peer, data: TransportErrorData & { limitBytes: number }, options?: { cause?: unknown }) {
    const mib = data.limitBytes / 1024 / 1024;
    const detail = `a body longer than ${data.limitBytes} bytes (${mib} MiB), which was not read further`;
    super(peer, { ...data, problem: 'too-large', detail }, options);
    this.name = 'BodyTooLargeError';
  }
}

/** The service gives a body past the cap a code of its own; a device's is one more malformed answer. */
function codeOf(peer: Peer, data: ResponseErrorData): ErrorCode {
  if (peer === 'device') return ErrorCode.DeviceResponse;
  return data.problem === 'too-large' ? ErrorCode.ServiceBodyTooLarge : ErrorCode.ServiceResponse;
}

function deviceSentence(data: ResponseErrorData): string {
  const operation = describeOperation(data);
  switch (data.problem) {
    case 'not-json':
      return `the device answered ${operation} with HTTP ${data.status ?? '?'} and ${data.detail}`;
    case 'shape':
      return `the device's answer to ${operation} does not have the expected shape: ${data.detail}`;
    case 'not-http':
      return `the device answered ${operation} with something that is not HTTP/1.1: ${data.detail}`;
    case 'too-large':
      return `the device at ${data.url} answered ${operation} with ${data.detail}`;
  }
}

function serviceSentence(data: ResponseErrorData): string {
  const operation = describeOperation(data);
  switch (data.problem) {
    case 'not-json':
      return `${serviceAt(data)} answered ${operation} with HTTP ${data.status ?? '?'} and ${data.detail}`;
    case 'shape':
      return `the answer of ${serviceAt(data)} to ${operation} does not have the expected shape: ${data.detail}`;
    case 'not-http':
      return `${serviceAt(data)} answered ${operation} with something that is not HTTP/1.1: ${data.detail}`;
    case 'too-large':
      return `${serviceAt(data)} sent more than ${bytesText(data.limitBytes ?? 0)} in answer to ${operation}; mpprov stopped reading it`;
  }
}

/** 4194304 -> "4 MiB", 1500 -> "1500 bytes". */
function bytesText(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
