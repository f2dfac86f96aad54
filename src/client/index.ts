/**
 * The Monitoring Point Admin API v1 client. Only this file is public; the rest of src/client is
 * internal. Its errors: the Device* classes of device-errors.ts for what an answer's status means,
 * and src/http's transport errors (peer `device`) for the rest.
 */
export { createAdminClient, type AdminApi } from './admin-client.js';
export type { ClientOptions, DeviceTarget, RetryInfo } from './device-target.js';
export type { DeviceTrust } from '../admin-api/device-trust.js';
export type { ConfigState, DeviceInterface } from '../admin-api/device-interface.js';
export type { WaitOptions } from './wait-until-answering.js';
export type { UploadedFile } from './upload-files.js';
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
export {
  FAMILIES,
  FILE_SLOTS,
  WRITE_ONLY_FIELDS,
  Stanza,
  Route,
  InUse,
  type Family,
  type FileSlot,
  type WriteOnlyField,
  type StanzaFields,
  type PostedStanza,
  type StanzaUpdate,
} from '../admin-api/stanza.js';
export { Capability, PortCapability } from '../admin-api/capability.js';
export { AclRule } from '../admin-api/acl-rule.js';
