/**
 * The Monitoring Point Admin API v1 client. Only this file is public; the rest of src/client is
 * internal. Errors are the Device* classes of src/errors.ts.
 */
export { createAdminClient, type AdminApi } from './admin-client.js';
export type { ClientOptions, DeviceTarget, RetryInfo } from './device-target.js';
export type { DeviceTrust } from '../admin-api/device-trust.js';
export type { ConfigState, DeviceInterface } from '../admin-api/device-interface.js';
export type { WaitOptions } from './wait-until-answering.js';
export type { UploadedFile } from './upload-files.js';
export { sha256Fingerprint, normaliseFingerprint } from './fingerprint.js';
export { deviceLockKeys, resolveDeviceIdentity, type DeviceIdentity } from './device-identity.js';
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
