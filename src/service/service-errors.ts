import {
  CertificateProblem,
  ConnectionProblem,
  connectionProblemText,
  ErrorCode,
  MpprovError,
  secondsText,
} from '../core/errors.js';

/**
 * Errors of the data API client. Each class builds its one sentence from its data, names the
 * service (its base URL) and the request, and never holds the token, the password or any header:
 * callers put names of things in the data, never their values.
 */

export interface ServiceOperation {
  method: 'GET';
  /** Relative to the base URL, with the query: `/v3/appliance?hostname=mp1`. */
  path: string;
}

export interface ServiceErrorData extends ServiceOperation {
  /** The service's base URL as configured, e.g. `https://service.example/api`. */
  url: string;
  status?: number | undefined;
  /** The `message` of the service's error answer, when it gave one (one line, bounded). */
  serviceMessage?: string | undefined;
}

export class ServiceError<D extends ServiceErrorData = ServiceErrorData> extends MpprovError {
  readonly data: D;

  constructor(code: ErrorCode, message: string, data: D, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'ServiceError';
    this.data = data;
  }
}

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof ServiceError;
}

const at = (data: ServiceErrorData) => `the service at ${data.url}`;
const op = (data: ServiceOperation) => `${data.method} ${data.path}`;
/** `HTTP 401 "Bad credentials"`: the status and, when given, the service's own words. */
const said = (data: ServiceErrorData) =>
  data.serviceMessage === undefined
    ? `HTTP ${data.status ?? '?'}`
    : `HTTP ${data.status ?? '?'} "${data.serviceMessage}"`;

export interface ServiceStatusErrorData extends ServiceErrorData {
  status: number;
  /** For 401: who was refused, `the access token` or `user@example.net` (never the secret). */
  credentials: string;
}

/**
 * The service answered with an error status. The code follows the documented table: the status,
 * and for 401 the message, which is the only thing that tells its three cases apart.
 */
export class ServiceStatusError extends ServiceError<ServiceStatusErrorData> {
  constructor(code: ErrorCode, data: ServiceStatusErrorData, options?: { cause?: unknown }) {
    super(code, statusSentence(code, data), data, options);
    this.name = 'ServiceStatusError';
  }
}

function statusSentence(code: ErrorCode, data: ServiceStatusErrorData): string {
  switch (code) {
    case ErrorCode.ServiceBadRequest:
      return `${at(data)} refused ${op(data)} as a bad request (${said(data)})`;
    case ErrorCode.ServiceNoCredentials:
      return `${at(data)} says no credentials reached it on ${op(data)} (${said(data)}); a proxy on the way may strip the Authorization header`;
    case ErrorCode.ServiceBadCredentials:
      return `${at(data)} does not accept ${data.credentials} (${said(data)}): it is wrong, expired or revoked`;
    case ErrorCode.ServiceUndecodableCredentials:
      return `${at(data)} could not decode ${data.credentials} (${said(data)})`;
    case ErrorCode.ServiceForbidden:
      return `${at(data)} denies ${op(data)} to ${data.credentials} (${said(data)}): no permission for it`;
    case ErrorCode.ServiceNotFound:
      return `${at(data)} has no endpoint ${op(data)} (${said(data)}); check that service.url ends with /api`;
    case ErrorCode.ServiceNotAcceptable:
      return `${at(data)} refused the headers of ${op(data)} (${said(data)})`;
    case ErrorCode.ServiceInternalError:
      return `${at(data)} failed internally on ${op(data)} (${said(data)}); retry later`;
    default:
      return `${at(data)} answered ${op(data)} with ${said(data)}`;
  }
}

export interface ServiceRateLimitedErrorData extends ServiceErrorData {
  attempts: number;
}

/** 429 on every attempt, each Retry-After waited out in between. */
export class ServiceRateLimitedError extends ServiceError<ServiceRateLimitedErrorData> {
  constructor(data: ServiceRateLimitedErrorData, options?: { cause?: unknown }) {
    super(
      ErrorCode.ServiceRateLimited,
      `${at(data)} still refused ${op(data)} as too many requests (${said(data)}) after ${data.attempts} attempts`,
      data,
      options,
    );
    this.name = 'ServiceRateLimitedError';
  }
}

export interface ServiceCertificateErrorData extends ServiceErrorData {
  problem: CertificateProblem;
  reason: string;
  tlsCode?: string | undefined;
}

/** The service's certificate did not verify, or the handshake failed: nothing was sent. */
export class ServiceCertificateError extends ServiceError<ServiceCertificateErrorData> {
  constructor(data: ServiceCertificateErrorData, options?: { cause?: unknown }) {
    super(ErrorCode.ServiceTls, `${certificateSentence(data)}; no token was sent`, data, options);
    this.name = 'ServiceCertificateError';
  }
}

function certificateSentence(data: ServiceCertificateErrorData): string {
  switch (data.problem) {
    case CertificateProblem.Untrusted:
      return `the certificate of ${data.url} is not issued by a CA in the system store or service.tls.ca (${data.reason})`;
    case CertificateProblem.WrongName:
      return `the certificate of ${data.url} is not issued for this host name (${data.reason})`;
    case CertificateProblem.Validity:
      return `the certificate of ${data.url} is not valid at this time (${data.reason})`;
    case CertificateProblem.Handshake:
      return `the TLS handshake with ${data.url} failed (${data.reason}); the service must speak TLS 1.2 or newer`;
  }
}

export interface ServiceUnreachableErrorData extends ServiceErrorData {
  problem: ConnectionProblem;
  socketCode?: string | undefined;
  requestSent: boolean;
}

export class ServiceUnreachableError extends ServiceError<ServiceUnreachableErrorData> {
  constructor(data: ServiceUnreachableErrorData, options?: { cause?: unknown }) {
    const what = connectionProblemText(data);
    super(
      ErrorCode.ServiceUnreachable,
      data.requestSent
        ? `lost the connection to ${data.url} during ${op(data)}: ${what}`
        : `cannot reach ${data.url}: ${what}`,
      data,
      options,
    );
    this.name = 'ServiceUnreachableError';
  }
}

export interface ServiceTimeoutErrorData extends ServiceErrorData {
  phase: 'connect' | 'response';
  timeoutMs: number;
}

export class ServiceTimeoutError extends ServiceError<ServiceTimeoutErrorData> {
  constructor(data: ServiceTimeoutErrorData, options?: { cause?: unknown }) {
    super(
      ErrorCode.ServiceTimeout,
      data.phase === 'connect'
        ? `${op(data)} timed out after ${secondsText(data.timeoutMs)} while connecting to ${data.url}`
        : `${op(data)} to ${data.url} timed out after ${secondsText(data.timeoutMs)}`,
      data,
      options,
    );
    this.name = 'ServiceTimeoutError';
  }
}

export interface ServiceResponseErrorData extends ServiceErrorData {
  /** `not-json`: the body is not JSON; `shape`: JSON of the wrong shape; `not-http`: not HTTP/1.1. */
  problem: 'not-json' | 'shape' | 'not-http';
  detail: string;
}

/** The service answered, but not with what the data API model promises. */
export class ServiceResponseError extends ServiceError<ServiceResponseErrorData> {
  constructor(data: ServiceResponseErrorData, options?: { cause?: unknown }) {
    super(ErrorCode.ServiceResponse, responseSentence(data), data, options);
    this.name = 'ServiceResponseError';
  }
}

function responseSentence(data: ServiceResponseErrorData): string {
  switch (data.problem) {
    case 'not-json':
      return `${at(data)} answered ${op(data)} with HTTP ${data.status ?? '?'} and ${data.detail}`;
    case 'shape':
      return `the answer of ${at(data)} to ${op(data)} does not have the expected shape: ${data.detail}`;
    case 'not-http':
      return `${at(data)} answered ${op(data)} with something that is not HTTP/1.1: ${data.detail}`;
  }
}

export interface ServiceBodyTooLargeErrorData extends ServiceErrorData {
  limitBytes: number;
}

/** The answer grew past the cap while streaming; reading stopped there and the connection was dropped. */
export class ServiceBodyTooLargeError extends ServiceError<ServiceBodyTooLargeErrorData> {
  constructor(data: ServiceBodyTooLargeErrorData, options?: { cause?: unknown }) {
    super(
      ErrorCode.ServiceBodyTooLarge,
      `${at(data)} sent more than ${bytesText(data.limitBytes)} in answer to ${op(data)}; mpprov stopped reading it`,
      data,
      options,
    );
    this.name = 'ServiceBodyTooLargeError';
  }
}

/** 4194304 -> "4 MiB", 1500 -> "1500 bytes". */
export function bytesText(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
