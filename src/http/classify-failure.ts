import { errors as undiciErrors } from '../core/undici.js';
import { ErrorCode, MpprovError } from '../core/errors.js';
import { CertificateError, CertificateProblem } from './certificate-error.js';
import { failedWhileConnecting, NameMismatch, PinMismatch } from './create-connector.js';
import { PinMismatchError } from './pin-mismatch-error.js';
import { ResponseError } from './response-error.js';
import { TimeoutError } from './timeout-error.js';
import { forPeer, type Peer, type TransportOperation } from './transport-error.js';
import { ConnectionProblem, UnreachableError } from './unreachable-error.js';

/**
 * Turns what undici or Node threw during one exchange into one typed error naming its peer.
 * Decided by `code` (undici's UND_ERR_*, Node's errno and OpenSSL names), never by message text.
 */

export interface FailureContext {
  peer: Peer;
  url: string;
  operation: TransportOperation;
  /** Whether our own per-request deadline fired (the abort error itself says nothing useful). */
  deadlineFired: boolean;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
}

/** Node: the chain does not lead to a trusted CA. */
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

export function classifyFailure(error: unknown, context: FailureContext): MpprovError {
  const { peer } = context;
  const data = { url: context.url, ...context.operation };
  const options = { cause: error };
  if (error instanceof PinMismatch) {
    return new PinMismatchError({ ...data, presented: error.presented, pinned: error.pinned }, options);
  }
  const certificate = (problem: CertificateProblem, reason: string, tlsCode: string): CertificateError =>
    new CertificateError(peer, { ...data, problem, reason: withoutNodeAdvice(reason), tlsCode }, options);
  if (error instanceof NameMismatch) return certificate(CertificateProblem.WrongName, error.message, error.tlsCode);
  if (context.deadlineFired) {
    return new TimeoutError(peer, { ...data, phase: 'response', timeoutMs: context.requestTimeoutMs }, options);
  }
  const code = codeOf(error);
  const reason = error instanceof Error ? error.message : String(error);
  // llhttp's parse errors (HPE_*, though "not HTTP at all" comes without a code), and a body
  // longer or shorter than its Content-Length.
  const notHttp = error instanceof undiciErrors.HTTPParserError || code?.startsWith('HPE_') === true;
  if (notHttp || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
    return new ResponseError(peer, { ...data, problem: 'not-http', detail: reason }, options);
  }
  const client = forPeer(peer, 'the Admin API client', 'the data API client');
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new TimeoutError(peer, { ...data, phase: 'connect', timeoutMs: context.connectTimeoutMs }, options);
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new TimeoutError(peer, { ...data, phase: 'response', timeoutMs: context.requestTimeoutMs }, options);
    case 'UND_ERR_CLOSED':
    case 'UND_ERR_DESTROYED':
      return new MpprovError(
        ErrorCode.Internal,
        `${client} for ${context.url} was closed before ${data.method} ${data.path} finished`,
        options,
      );
  }
  // Not the peer's doing: a bug here or in undici. Said as such, not dressed up as a network failure.
  const internal = (): MpprovError =>
    new MpprovError(ErrorCode.Internal, `${client} failed on ${data.method} ${data.path} to ${data.url}: ${reason}`, {
      cause: error,
    });
  if (code === undefined) return internal();
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return certificate(CertificateProblem.WrongName, reason, code);
  if (UNTRUSTED.has(code)) return certificate(CertificateProblem.Untrusted, reason, code);
  if (VALIDITY.has(code)) return certificate(CertificateProblem.Validity, reason, code);
  if (code.startsWith('ERR_SSL_') || code === 'EPROTO' || code.startsWith('ERR_TLS_')) {
    return certificate(CertificateProblem.Handshake, reason, code);
  }
  const problem = CONNECTION[code];
  // Any other errno (E...) is still the network; anything else (an invalid argument, say) is ours.
  if (problem === undefined && !/^E[A-Z]+$/.test(code)) return internal();
  return new UnreachableError(
    peer,
    {
      ...data,
      problem: problem ?? ConnectionProblem.Other,
      socketCode: code,
      requestSent: !failedWhileConnecting(error),
    },
    options,
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

/**
 * Node 24 ends a verification failure's message with advice for whoever runs Node
 * ("; if the root CA is installed locally, try running Node.js with --use-system-ca"): mpprov
 * says which CA it trusts and how to change that, and a technician cannot act on node's options.
 */
function withoutNodeAdvice(reason: string): string {
  return reason.replace(/; if the root CA is installed locally, try running Node\.js with --use-system-ca$/, '');
}
