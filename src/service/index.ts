/**
 * The monitoring service's data API (docs/service-model.md): the client, and the post-check
 * that confirms a provisioned MP rejoined the service. Only this file is public.
 */
export { createDataApiClient, type DataApi, type DataApiClientOptions } from './data-api-client.js';
export { RateLimiter, DATA_API_RATE_LIMIT } from './rate-limiter.js';
export type { ServiceRetryInfo } from './service-request.js';
export { serviceTarget, type ServiceCredentials, type ServiceSettings } from './service-settings.js';
export { ServiceStatusError } from './service-errors.js';
// The transport errors under the names service code has always used: one class each for both peers.
export {
  BodyTooLargeError as ServiceBodyTooLargeError,
  CertificateError as ServiceCertificateError,
  RateLimitedError as ServiceRateLimitedError,
  ResponseError as ServiceResponseError,
  TimeoutError as ServiceTimeoutError,
  UnreachableError as ServiceUnreachableError,
} from '../http/index.js';
export { waitUntilConnected, type ConnectionProgress } from './wait-until-connected.js';
export { ConnectionOutcomeKind, type ConnectionOutcome } from './connection-outcome.js';
export { checkService } from './check-service.js';
