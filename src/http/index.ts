/**
 * The transport both API clients stand on: the TLS connector (CA, pin or the system store), one
 * exchange with a deadline and a capped body, Retry-After, and the errors of any exchange, each
 * naming its peer (`device` or `service`) and carrying a stable code. Only this file is public;
 * what a status means, credentials and retries are the endpoint layers' (src/client, src/service).
 */
export {
  TransportError,
  describeOperation,
  serviceAt,
  statusSaid,
  type TransportErrorData,
  type TransportOperation,
} from './transport-error.js';
export { CertificateError } from './certificate-error.js';
export { PinMismatchError } from './pin-mismatch-error.js';
export { UnreachableError, ConnectionProblem, connectionProblemText } from './unreachable-error.js';
export { TimeoutError } from './timeout-error.js';
export { ResponseError, BodyTooLargeError } from './response-error.js';
export { RateLimitedError } from './rate-limited-error.js';
export { connectorsFor, createConnector } from './create-connector.js';
export { peerUrl } from './peer-url.js';
export { trustedCertificates } from './trusted-certificates.js';
export { normaliseFingerprint, sha256Fingerprint } from './fingerprint.js';
export { sendRequest, type Outcome } from './send-request.js';
export { classifyFailure } from './classify-failure.js';
export { refusedConnect } from './refused-connect.js';
export { MAX_BODY_BYTES } from './read-capped-body.js';
export { retryAfterMs } from './retry-after-ms.js';
export { oneLine, parseJson, successJson, type RawAnswer } from './answer-text.js';
