/**
 * The transport both API clients stand on: the TLS connector (CA, pin or the system store), one
 * exchange with a deadline and a capped body, Retry-After, and the errors of any exchange, each
 * naming its peer (`device` or `service`) and carrying a stable code. Only this file is public;
 * what a status means, credentials and retries are the endpoint layers' (src/client, src/service).
 */
export {
  TransportError,
  isTransportError,
  describeOperation,
  serviceAt,
  statusSaid,
  type Peer,
  type TransportErrorData,
  type TransportOperation,
} from './transport-error.js';
export { CertificateError, CertificateProblem, type CertificateErrorData } from './certificate-error.js';
export { PinMismatchError, type PinMismatchErrorData } from './pin-mismatch-error.js';
export {
  UnreachableError,
  ConnectionProblem,
  connectionProblemText,
  type UnreachableErrorData,
} from './unreachable-error.js';
export { TimeoutError, type TimeoutErrorData } from './timeout-error.js';
export { ResponseError, BodyTooLargeError, type ResponseErrorData } from './response-error.js';
export { RateLimitedError, type RateLimitedErrorData } from './rate-limited-error.js';
export { createConnector, type ConnectorTrust } from './create-connector.js';
export { peerUrl } from './peer-url.js';
export { trustedCertificates } from './trusted-certificates.js';
export { normaliseFingerprint, sha256Fingerprint } from './fingerprint.js';
export { sendRequest, type Outcome, type PeerRequest } from './send-request.js';
export { MAX_BODY_BYTES } from './read-capped-body.js';
export { retryAfterMs, RetryAfterLimits } from './retry-after-ms.js';
export { oneLine, parseJson, successJson, type RawAnswer } from './answer-text.js';
