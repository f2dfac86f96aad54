/**
 * The Monitoring Point simulator: a faithful Admin API v1 device (docs/device-model.md) for tests
 * of the provisioning engine and for field staff rehearsing a stick. Only this file is public.
 */
export { SimulatorError, SimulatorErrorCode, isSimulatorError } from './simulator-error.js';
export {
  startSimulator,
  DOT1X_BACKENDS,
  type Dot1xBackendName,
  type SimulatorHandle,
  type SimulatorOptions,
} from './simulator.js';
export { runSimulate } from './run-simulate.js';
export { simulatorOptionsFromFlags, type SimulateFlags } from './simulate-flags.js';
export { startFleet, type Fleet, type FleetManifest, type FleetManifestDevice } from './fleet.js';
export type { SimulatorState } from './simulator-state.js';
export type { RequestLogEntry } from './request-log.js';
export type { DeviceEventHooks, ResetOptions } from './simulated-device.js';
export { parseFault, formatFault, FaultSyntaxError, FAULT_KINDS, type FaultKind, type FaultSpec } from './faults.js';
export type { RateLimit } from './rate-limiter.js';
export { loadDeviceDescription, describeBuiltInModel, type DeviceDescription } from './device-description.js';
export { BUILT_IN_MODELS, DEFAULT_MODEL, type DeviceModel, type PhysicalPort } from './device-model.js';
export {
  loadAuthenticatorProfile,
  parseAuthenticatorProfile,
  EAP_METHODS,
  USER_METHODS,
  type AuthenticatorProfile,
  type EapMethod,
  type UserMethod,
} from './authenticator-profile.js';
export type { Dot1xBackend, Dot1xFiles, Dot1xResult } from './dot1x-backend.js';
export { modelDot1xBackend } from './dot1x-model-backend.js';
export {
  createRealDot1xBackend,
  DEFAULT_DOT1X_TIMEOUT_MS,
  RealDot1xBackend,
  type RealDot1xBackendOptions,
} from './dot1x-real-backend.js';
export { checkRealBackendPrerequisites, type PrerequisiteCheck } from './real-backend-prerequisites.js';
export { liveLabs, LAB_PREFIX, type LabNames } from './netns-lab.js';
export { renderWpaSupplicantConfig, WPA_SUPPLICANT_OPTIONS, type FilePathOf } from './wpa-supplicant-config.js';
export {
  createSelfSignedCertificate,
  generateEcKeyPair,
  fingerprintOfDer,
  type EcKeyPair,
  type SelfSignedCertificate,
  type SelfSignedCertificateOptions,
} from './self-signed-certificate.js';
