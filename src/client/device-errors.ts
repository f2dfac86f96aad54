import { ErrorCode, secondsText } from '../core/errors.js';
import { describeOperation, TransportError, type TransportErrorData } from '../http/index.js';

/**
 * The errors only a device's answers raise: what its statuses mean for Admin API v1. The errors
 * any exchange can end in (certificate, pin, unreachable, timeout, malformed or oversized answer,
 * rate limit) are src/http's, with `peer: 'device'`.
 */

/** Any error of talking to a device. */
export type DeviceError = TransportError & { readonly peer: 'device' };

export function isDeviceError(value: unknown): value is DeviceError {
  return value instanceof TransportError && value.peer === 'device';
}

const reasonOf = (data: TransportErrorData): string => data.deviceMessage ?? '(the device gave no reason)';

export interface DeviceAuthErrorData extends TransportErrorData {
  username: string;
}

/** 401: the user name or password is wrong (the message names the user, never the password). */
export class DeviceAuthError extends TransportError<DeviceAuthErrorData> {
  constructor(data: DeviceAuthErrorData, options?: { cause?: unknown }) {
    super('device', ErrorCode.DeviceAuth, `bad credentials for ${data.username} at ${data.url}`, data, options);
    this.name = 'DeviceAuthError';
  }
}

/** A device error that came with an HTTP answer. */
export type StatusData = TransportErrorData & { status: number };

/**
 * The device understood the request and refused it: 400 (invalid body, rule violated), 409
 * (conflicting state), 413 (too large), 417 (Expect header), or a 2xx answer with success false.
 */
export class DeviceRefusedError extends TransportError<StatusData> {
  constructor(data: StatusData, options?: { cause?: unknown }) {
    super('device', ErrorCode.DeviceRefused, refusedSentence(data), data, options);
    this.name = 'DeviceRefusedError';
  }
}

function refusedSentence(data: StatusData): string {
  const operation = describeOperation(data);
  switch (data.status) {
    case 409:
      return `the device refused ${operation} as a conflict with its current configuration: ${reasonOf(data)}`;
    case 413:
      return `the device refused ${operation} as too large: ${reasonOf(data)}`;
    case 417:
      return `the device refused ${operation} because of the request's Expect header (HTTP 417): ${reasonOf(data)}`;
    default:
      return `the device refused ${operation}: ${reasonOf(data)}`;
  }
}

/** Any other unexpected HTTP status: 404, 405, 500 and whatever a device may add. */
export class DeviceHttpError extends TransportError<StatusData> {
  constructor(data: StatusData, options?: { cause?: unknown }) {
    super('device', ErrorCode.DeviceHttp, httpSentence(data), data, options);
    this.name = 'DeviceHttpError';
  }
}

function httpSentence(data: StatusData): string {
  const operation = describeOperation(data);
  switch (data.status) {
    case 404:
      return `the device has no such resource for ${operation} (HTTP 404): ${reasonOf(data)}`;
    case 405:
      return `the device does not allow ${operation} (HTTP 405; its firmware may not follow Admin API v1): ${reasonOf(data)}`;
    case 500:
      return `the device failed internally on ${operation} (HTTP 500): ${reasonOf(data)}`;
    default:
      return `the device answered ${operation} with HTTP ${data.status}: ${reasonOf(data)}`;
  }
}

export interface DeviceNotAnsweringErrorData extends TransportErrorData {
  waitedMs: number;
  attempts: number;
  /** Why the last attempt failed, e.g. "connection refused". */
  lastReason: string;
}

/** After a restart or reboot the device did not come back in time. */
export class DeviceNotAnsweringError extends TransportError<DeviceNotAnsweringErrorData> {
  constructor(data: DeviceNotAnsweringErrorData, options?: { cause?: unknown }) {
    super(
      'device',
      ErrorCode.DeviceNotAnswering,
      `the device at ${data.url} did not answer within ${secondsText(data.waitedMs)} (last attempt: ${data.lastReason})`,
      data,
      options,
    );
    this.name = 'DeviceNotAnsweringError';
  }
}
