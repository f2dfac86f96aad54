/**
 * One error hierarchy for the whole agent. Every error has a stable `code` that callers branch on
 * (never the message), a sentence that says what failed and where, and the original `cause`.
 * Secrets never go into a message: callers pass names of things, not their values.
 */

export const ErrorCode = {
  ConfigInvalid: 'MPPROV_CONFIG_INVALID',
  ConfigUnreadable: 'MPPROV_CONFIG_UNREADABLE',
  DeviceAuth: 'MPPROV_DEVICE_AUTH',
  DeviceTls: 'MPPROV_DEVICE_TLS',
  DeviceRefused: 'MPPROV_DEVICE_REFUSED',
  DeviceHttp: 'MPPROV_DEVICE_HTTP',
  DeviceUnreachable: 'MPPROV_DEVICE_UNREACHABLE',
  DeviceTimeout: 'MPPROV_DEVICE_TIMEOUT',
  DeviceResponse: 'MPPROV_DEVICE_RESPONSE',
  DevicePinMismatch: 'MPPROV_DEVICE_PIN_MISMATCH',
  DeviceRateLimited: 'MPPROV_DEVICE_RATE_LIMITED',
  DeviceNotAnswering: 'MPPROV_DEVICE_NOT_ANSWERING',
  // The monitoring service's data API (src/service): one code per documented status and message.
  ServiceBadRequest: 'MPPROV_SERVICE_BAD_REQUEST',
  ServiceNoCredentials: 'MPPROV_SERVICE_NO_CREDENTIALS',
  ServiceBadCredentials: 'MPPROV_SERVICE_BAD_CREDENTIALS',
  ServiceUndecodableCredentials: 'MPPROV_SERVICE_UNDECODABLE_CREDENTIALS',
  ServiceForbidden: 'MPPROV_SERVICE_FORBIDDEN',
  ServiceNotFound: 'MPPROV_SERVICE_NOT_FOUND',
  ServiceNotAcceptable: 'MPPROV_SERVICE_NOT_ACCEPTABLE',
  ServiceRateLimited: 'MPPROV_SERVICE_RATE_LIMITED',
  ServiceInternalError: 'MPPROV_SERVICE_INTERNAL_ERROR',
  ServiceHttp: 'MPPROV_SERVICE_HTTP',
  ServiceTls: 'MPPROV_SERVICE_TLS',
  ServiceUnreachable: 'MPPROV_SERVICE_UNREACHABLE',
  ServiceTimeout: 'MPPROV_SERVICE_TIMEOUT',
  ServiceResponse: 'MPPROV_SERVICE_RESPONSE',
  ServiceBodyTooLarge: 'MPPROV_SERVICE_BODY_TOO_LARGE',
  PlanRefused: 'MPPROV_PLAN_REFUSED',
  ApplyFailed: 'MPPROV_APPLY_FAILED',
  VerificationFailed: 'MPPROV_VERIFICATION_FAILED',
  Usage: 'MPPROV_USAGE',
  Internal: 'MPPROV_INTERNAL',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export class MpprovError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MpprovError';
    this.code = code;
  }
}

export function isMpprovError(value: unknown): value is MpprovError {
  return value instanceof MpprovError;
}

/** Exit statuses of the CLI, one table for every command. */
export const ExitStatus = {
  Ok: 0,
  Failure: 1,
  /** `mpprov plan`: the plan has changes (as `diff` and `terraform plan -detailed-exitcode` do). */
  Changes: 2,
  /** `mpprov apply`: every device configured and verified, at least one not confirmed connected to the monitoring service. */
  NotConnected: 3,
  Usage: 64,
} as const;

export function exitStatusFor(code: ErrorCode): number {
  return code === ErrorCode.Usage ? ExitStatus.Usage : ExitStatus.Failure;
}

// ---------------------------------------------------------------------------------------------
// Device errors: what can go wrong talking to a Monitoring Point's Admin API. Each class builds
// its one-sentence message from its data, so the sentence and the data cannot disagree. The data
// holds the device URL, the operation and what the device said; never a password or header.
// ---------------------------------------------------------------------------------------------

/** The request under way when a device failure happened. `path` is relative to /api/v1. */
export interface DeviceOperation {
  method: string;
  path: string;
  /** What the request is about when the path does not say it, e.g. `eth1 inet`. */
  subject?: string | undefined;
}

export interface DeviceErrorData extends Partial<DeviceOperation> {
  /** The device, `https://host:port`. */
  url: string;
  status?: number | undefined;
  /** The device's own sentence (`error` of its JSON answer), when it gave one. */
  deviceMessage?: string | undefined;
}

/** Base of every device error; `data` is plain, so it can go into a JSON log line as it is. */
export class DeviceError<D extends DeviceErrorData = DeviceErrorData> extends MpprovError {
  readonly data: D;

  constructor(code: ErrorCode, message: string, data: D, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'DeviceError';
    this.data = data;
  }
}

export function isDeviceError(value: unknown): value is DeviceError {
  return value instanceof DeviceError;
}

/** `POST /interface/ (eth1 inet)` */
export function describeOperation(operation: Partial<DeviceOperation>): string {
  const base = `${operation.method ?? '?'} ${operation.path ?? '?'}`;
  return operation.subject === undefined ? base : `${base} (${operation.subject})`;
}

/** 30000 -> "30 s", 250 -> "0.25 s". */
export function secondsText(ms: number): string {
  return `${Math.round(ms) / 1000} s`;
}

const reasonOf = (data: DeviceErrorData): string => data.deviceMessage ?? '(the device gave no reason)';

export interface DeviceAuthErrorData extends DeviceErrorData {
  username: string;
}

/** 401: the user name or password is wrong (the message names the user, never the password). */
export class DeviceAuthError extends DeviceError<DeviceAuthErrorData> {
  constructor(data: DeviceAuthErrorData, options?: { cause?: unknown }) {
    super(ErrorCode.DeviceAuth, `bad credentials for ${data.username} at ${data.url}`, data, options);
    this.name = 'DeviceAuthError';
  }
}

export interface DevicePinMismatchErrorData extends DeviceErrorData {
  /** Fingerprints as `AB:CD:...`. */
  presented: string;
  pinned: string;
}

/** The device's certificate is not the pinned one; the connection was closed before any request. */
export class DevicePinMismatchError extends DeviceError<DevicePinMismatchErrorData> {
  constructor(data: DevicePinMismatchErrorData, options?: { cause?: unknown }) {
    super(
      ErrorCode.DevicePinMismatch,
      `the device at ${data.url} presented a certificate with SHA-256 fingerprint ${data.presented}, ` +
        `but the configuration pins ${data.pinned}; no credentials were sent`,
      data,
      options,
    );
    this.name = 'DevicePinMismatchError';
  }
}

export const CertificateProblem = {
  /** Not issued by the configured CA (self-signed, unknown issuer, bad signature). */
  Untrusted: 'untrusted',
  /** Issued by the CA, but for another host name or address. */
  WrongName: 'wrong-name',
  /** Expired or not yet valid. */
  Validity: 'validity',
  /** The handshake itself failed (protocol, not TLS at all). */
  Handshake: 'handshake',
} as const;
export type CertificateProblem = (typeof CertificateProblem)[keyof typeof CertificateProblem];

export interface DeviceCertificateErrorData extends DeviceErrorData {
  problem: CertificateProblem;
  /** Node's reason, e.g. "self-signed certificate". */
  reason: string;
  /** Node's or OpenSSL's code, e.g. DEPTH_ZERO_SELF_SIGNED_CERT. */
  tlsCode?: string | undefined;
}

export class DeviceCertificateError extends DeviceError<DeviceCertificateErrorData> {
  constructor(data: DeviceCertificateErrorData, options?: { cause?: unknown }) {
    super(ErrorCode.DeviceTls, certificateSentence(data), data, options);
    this.name = 'DeviceCertificateError';
  }
}

function certificateSentence(data: DeviceCertificateErrorData): string {
  switch (data.problem) {
    case CertificateProblem.Untrusted:
      return `the certificate of ${data.url} is not issued by the configured CA (${data.reason})`;
    case CertificateProblem.WrongName:
      return `the certificate of ${data.url} is issued by the configured CA but not for this address (${data.reason})`;
    case CertificateProblem.Validity:
      return `the certificate of ${data.url} is not valid at this time (${data.reason})`;
    case CertificateProblem.Handshake:
      return `the TLS handshake with ${data.url} failed (${data.reason})`;
  }
}

/**
 * The device understood the request and refused it: 400 (invalid body, rule violated), 409
 * (conflicting state), 413 (too large), 417 (Expect header), or a 2xx answer with success false.
 */
export class DeviceRefusedError extends DeviceError {
  constructor(data: DeviceErrorData & { status: number }, options?: { cause?: unknown }) {
    super(ErrorCode.DeviceRefused, refusedSentence(data), data, options);
    this.name = 'DeviceRefusedError';
  }
}

function refusedSentence(data: DeviceErrorData & { status: number }): string {
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
export class DeviceHttpError extends DeviceError {
  constructor(data: DeviceErrorData & { status: number }, options?: { cause?: unknown }) {
    super(ErrorCode.DeviceHttp, httpSentence(data), data, options);
    this.name = 'DeviceHttpError';
  }
}

function httpSentence(data: DeviceErrorData & { status: number }): string {
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

export interface DeviceRateLimitedErrorData extends DeviceErrorData {
  attempts: number;
}

/** 429 on every attempt, Retry-After honoured in between. */
export class DeviceRateLimitedError extends DeviceError<DeviceRateLimitedErrorData> {
  constructor(data: DeviceRateLimitedErrorData, options?: { cause?: unknown }) {
    super(
      ErrorCode.DeviceRateLimited,
      `the device still refused ${describeOperation(data)} as too many requests (HTTP 429) after ${data.attempts} attempts: ${reasonOf(data)}`,
      data,
      options,
    );
    this.name = 'DeviceRateLimitedError';
  }
}

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

export interface DeviceUnreachableErrorData extends DeviceErrorData {
  problem: ConnectionProblem;
  /** Node's code (ECONNREFUSED, UND_ERR_SOCKET, ...). */
  socketCode?: string | undefined;
  /** False when the connection failed before the request left: the device did not see it. */
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

export class DeviceUnreachableError extends DeviceError<DeviceUnreachableErrorData> {
  constructor(data: DeviceUnreachableErrorData, options?: { cause?: unknown }) {
    super(ErrorCode.DeviceUnreachable, unreachableSentence(data), data, options);
    this.name = 'DeviceUnreachableError';
  }
}

/** `connection refused`, `host unreachable`, ...: the problem as the sentences below say it. */
export function connectionProblemText(data: Pick<DeviceUnreachableErrorData, 'problem' | 'socketCode'>): string {
  return data.problem === ConnectionProblem.Other && data.socketCode !== undefined
    ? `connection failed (${data.socketCode})`
    : CONNECTION_TEXT[data.problem];
}

function unreachableSentence(data: DeviceUnreachableErrorData): string {
  const what = connectionProblemText(data);
  if (!data.requestSent || data.method === undefined) return `cannot reach ${data.url}: ${what}`;
  const lost = `lost the connection to ${data.url} during ${describeOperation(data)}: ${what}`;
  // A write whose answer was lost may or may not have taken effect: the technician must know.
  return data.method === 'GET' ? lost : `${lost}; the device may or may not have applied it`;
}

export interface DeviceTimeoutErrorData extends DeviceErrorData {
  /** `connect`: no TCP/TLS connection in time; `response`: no complete answer in time. */
  phase: 'connect' | 'response';
  timeoutMs: number;
}

export class DeviceTimeoutError extends DeviceError<DeviceTimeoutErrorData> {
  constructor(data: DeviceTimeoutErrorData, options?: { cause?: unknown }) {
    const operation = describeOperation(data);
    super(
      ErrorCode.DeviceTimeout,
      data.phase === 'connect'
        ? `${operation} timed out after ${secondsText(data.timeoutMs)} while connecting to ${data.url}`
        : `${operation} timed out after ${secondsText(data.timeoutMs)}`,
      data,
      options,
    );
    this.name = 'DeviceTimeoutError';
  }
}

export interface DeviceResponseErrorData extends DeviceErrorData {
  /** `not-json`: the body is not JSON; `shape`: JSON of the wrong shape; `not-http`: not HTTP/1.1 at all. */
  problem: 'not-json' | 'shape' | 'not-http' | 'too-large';
  /**
   * What was wrong: for not-json a phrase such as `a body that is not JSON (text/html): "<html>..."`
   * or `an empty body instead of JSON`; for shape the first schema issues; for not-http the parser's reason;
   * for too-large the cap the body went past (an answer body is read with a size cap while streaming).
   */
  detail: string;
}

/** The device answered, but not with what Admin API v1 promises. */
export class DeviceResponseError extends DeviceError<DeviceResponseErrorData> {
  constructor(data: DeviceResponseErrorData, options?: { cause?: unknown }) {
    super(ErrorCode.DeviceResponse, responseSentence(data), data, options);
    this.name = 'DeviceResponseError';
  }
}

function responseSentence(data: DeviceResponseErrorData): string {
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

export interface DeviceNotAnsweringErrorData extends DeviceErrorData {
  waitedMs: number;
  attempts: number;
  /** Why the last attempt failed, e.g. "connection refused". */
  lastReason: string;
}

/** After a restart or reboot the device did not come back in time. */
export class DeviceNotAnsweringError extends DeviceError<DeviceNotAnsweringErrorData> {
  constructor(data: DeviceNotAnsweringErrorData, options?: { cause?: unknown }) {
    super(
      ErrorCode.DeviceNotAnswering,
      `the device at ${data.url} did not answer within ${secondsText(data.waitedMs)} (last attempt: ${data.lastReason})`,
      data,
      options,
    );
    this.name = 'DeviceNotAnsweringError';
  }
}

// ---------------------------------------------------------------------------------------------
// Verification: the device answered, but its configuration is not what was asked for.
// ---------------------------------------------------------------------------------------------

export const VerifiedView = {
  /** The pending view after posting, before the restart: networking is then not restarted. */
  Pending: 'pending',
  /** The active view after the restart differs: a wrong result, the case for a roll-back. */
  Active: 'active',
  /** After the restart the changes are still only pending: the restart did not take. */
  NeverActive: 'never-active',
} as const;
export type VerifiedView = (typeof VerifiedView)[keyof typeof VerifiedView];

export class VerificationError extends MpprovError {
  constructor(
    readonly view: VerifiedView,
    /** One sentence per stanza that differs; never a secret value (write-only fields are compared by their _set markers). */
    readonly problems: readonly string[],
  ) {
    super(ErrorCode.VerificationFailed, `${VIEW_TEXT[view]}: ${problems.join('; ')}`);
    this.name = 'VerificationError';
  }
}

const VIEW_TEXT: Record<VerifiedView, string> = {
  pending: "the device's pending configuration differs from what was posted",
  active: 'after the restart the device runs a different configuration than requested',
  'never-active': 'the networking restart did not make the changes active (they are still pending)',
};
