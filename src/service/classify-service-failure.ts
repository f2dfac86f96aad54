import { errors as undiciErrors } from '../core/undici.js';
import { CertificateProblem, ConnectionProblem, ErrorCode, MpprovError } from '../core/errors.js';
import { failedWhileConnecting, ServiceNameMismatch } from './service-connector.js';
import {
  ServiceCertificateError,
  ServiceResponseError,
  ServiceTimeoutError,
  ServiceUnreachableError,
  type ServiceOperation,
} from './service-errors.js';

/**
 * Turns what undici or Node threw during one exchange with the service into one typed error,
 * decided by `code` (undici's UND_ERR_*, Node's errno, OpenSSL's names), never by message text.
 * The same table as the Admin API client's classify-failure.ts, with the service's error classes.
 */

export interface ServiceFailureContext {
  url: string;
  operation: ServiceOperation;
  /** Whether our own per-request deadline fired (the abort error itself says nothing useful). */
  deadlineFired: boolean;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
}

const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
]);
const VALIDITY = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
]);

const CONNECTION: Record<string, ConnectionProblem> = {
  ECONNREFUSED: ConnectionProblem.Refused,
  ECONNRESET: ConnectionProblem.Reset,
  ECONNABORTED: ConnectionProblem.Reset,
  EPIPE: ConnectionProblem.Reset,
  UND_ERR_SOCKET: ConnectionProblem.Closed,
  EHOSTUNREACH: ConnectionProblem.HostUnreachable,
  EHOSTDOWN: ConnectionProblem.HostUnreachable,
  ENETUNREACH: ConnectionProblem.NetworkUnreachable,
  ENETDOWN: ConnectionProblem.NetworkUnreachable,
  ENOTFOUND: ConnectionProblem.NameNotFound,
  EAI_AGAIN: ConnectionProblem.NameNotFound,
  ETIMEDOUT: ConnectionProblem.TimedOut,
};

export function classifyServiceFailure(error: unknown, context: ServiceFailureContext): MpprovError {
  const data = { url: context.url, ...context.operation };
  const options = { cause: error };
  if (error instanceof ServiceNameMismatch) {
    return new ServiceCertificateError(
      { ...data, problem: CertificateProblem.WrongName, reason: error.message, tlsCode: error.tlsCode },
      options,
    );
  }
  if (context.deadlineFired)
    return new ServiceTimeoutError({ ...data, phase: 'response', timeoutMs: context.requestTimeoutMs }, options);
  const code = codeOf(error);
  const reason = error instanceof Error ? error.message : String(error);
  if (
    error instanceof undiciErrors.HTTPParserError ||
    code?.startsWith('HPE_') === true ||
    code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH'
  ) {
    return new ServiceResponseError({ ...data, problem: 'not-http', detail: reason }, options);
  }
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new ServiceTimeoutError({ ...data, phase: 'connect', timeoutMs: context.connectTimeoutMs }, options);
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new ServiceTimeoutError({ ...data, phase: 'response', timeoutMs: context.requestTimeoutMs }, options);
    case 'UND_ERR_CLOSED':
    case 'UND_ERR_DESTROYED':
      return new MpprovError(
        ErrorCode.Internal,
        `the data API client for ${context.url} was closed before ${data.method} ${data.path} finished`,
        options,
      );
  }
  if (code === undefined) return internal(data, reason, error);
  const certificate = (problem: CertificateProblem) =>
    new ServiceCertificateError({ ...data, problem, reason, tlsCode: code }, options);
  if (UNTRUSTED.has(code)) return certificate(CertificateProblem.Untrusted);
  if (VALIDITY.has(code)) return certificate(CertificateProblem.Validity);
  if (code.startsWith('ERR_SSL_') || code === 'EPROTO' || code.startsWith('ERR_TLS_'))
    return certificate(CertificateProblem.Handshake);
  const problem = CONNECTION[code];
  // Any other errno (E...) is still the network; anything else (an invalid argument, say) is ours.
  if (problem === undefined && !/^E[A-Z]+$/.test(code)) return internal(data, reason, error);
  return new ServiceUnreachableError(
    {
      ...data,
      problem: problem ?? ConnectionProblem.Other,
      socketCode: code,
      requestSent: !failedWhileConnecting(error),
    },
    options,
  );
}

/** Not the service's doing: a bug here or in undici, said as such. */
function internal(data: { url: string } & ServiceOperation, reason: string, cause: unknown): MpprovError {
  return new MpprovError(
    ErrorCode.Internal,
    `the data API client failed on ${data.method} ${data.path} to ${data.url}: ${reason}`,
    { cause },
  );
}

/** The first `code` along the cause chain (undici sometimes wraps the socket's error). */
function codeOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
