/**
 * The Monitoring Point Admin API v1 client. Only this file is public; the rest of src/client is
 * internal. Its errors: the Device* classes of device-errors.ts for what an answer's status means,
 * and src/http's transport errors (peer `device`) for the rest.
 */
export { createAdminClient, type AdminApi } from './admin-client.js';
export type { ClientOptions, DeviceTarget, RetryInfo } from './device-target.js';
export type { DeviceTrust } from '../admin-api/device-trust.js';
export type { DeviceInterface } from '../admin-api/device-interface.js';
export { sha256Fingerprint, normaliseFingerprint } from '../http/index.js';
export {
  DeviceAuthError,
  DeviceHttpError,
  DeviceNotAnsweringError,
  DeviceRefusedError,
  isDeviceError,
  type DeviceError,
} from './device-errors.js';
// The transport errors under the names device code has always used: one class each for both peers.
export {
  CertificateError as DeviceCertificateError,
  PinMismatchError as DevicePinMismatchError,
  RateLimitedError as DeviceRateLimitedError,
  ResponseError as DeviceResponseError,
  TimeoutError as DeviceTimeoutError,
  UnreachableError as DeviceUnreachableError,
} from '../http/index.js';
export {
  deviceKeys,
  deviceLockKeys,
  literalDeviceIdentity,
  resolveDeviceIdentity,
  type DeviceIdentity,
} from './device-identity.js';
export { AclRule } from '../admin-api/acl-rule.js';
