/**
 * The monitoring service's data API (docs/service-model.md): the client, and the post-check
 * that confirms a provisioned MP rejoined the service. Only this file is public.
 */
export { createDataApiClient, type DataApi, type DataApiClientOptions } from './data-api-client.js';
export type { ApplianceQuery, CallOptions } from './data-api-endpoints.js';
export { Appliance, ConnectionStatus, CONNECTION_STATUSES, Organization } from './data-api-model.js';
export { RateLimiter, DATA_API_RATE_LIMIT, type RateLimit, type Turn } from './rate-limiter.js';
export type { ServiceRetryInfo } from './service-request.js';
export {
  serviceTarget,
  type ServiceCredentials,
  type ServiceSettings,
  type ServiceTarget,
} from './service-settings.js';
export { DEFAULT_MAX_BODY_BYTES } from './capped-body.js';
export {
  ServiceError,
  ServiceStatusError,
  ServiceRateLimitedError,
  ServiceCertificateError,
  ServiceUnreachableError,
  ServiceTimeoutError,
  ServiceResponseError,
  ServiceBodyTooLargeError,
  isServiceError,
  type ServiceErrorData,
  type ServiceOperation,
} from './service-errors.js';
export { waitUntilConnected, type ConnectionProgress, type WaitUntilConnectedOptions } from './wait-until-connected.js';
export { ConnectionOutcomeKind, type ConnectionOutcome } from './connection-outcome.js';
export { checkService, type ServiceCheckLine } from './check-service.js';
