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
export { waitUntilConnected } from './wait-until-connected.js';
export { createServiceWatch, type ServiceWatch, type ServiceWatchOptions } from './service-watch.js';
export type { ConnectionProgress, WaitConnectedOptions } from './connection-rounds.js';
export type { EnsurePathsOptions } from './ensure-paths.js';
export type { PathOutcome, PathProgress, WantedPath } from './path-outcome.js';
export { PathPlanAction, type PathPlanEntry } from './plan-paths.js';
export { ConnectionOutcomeKind, type ConnectionOutcome } from './connection-outcome.js';
export {
  organizationName,
  type Appliance,
  type NetworkPath,
  type Organization,
  type PathData,
  type PathStatus,
} from './data-api-model.js';
export { checkService } from './check-service.js';
export { appliancesNamed } from './appliances-named.js';
export { reportMpPaths, type MpPathsReport, type PathReport } from './mp-paths-report.js';
export { OBSERVER_KINDS, Observer, type NewObserver, type ObserverKind } from './observer-endpoints.js';
