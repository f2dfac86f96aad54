export {
  applyStick,
  notConnected,
  stickSecrets,
  StickOutcome,
  type StickApplyOptions,
  type StickResult,
} from './apply-stick.js';
export {
  Outcome,
  type ApplyEvent,
  type ApplyEventSink,
  type DeviceResult,
  type RollbackReport,
  type RollbackStanza,
  type StepRecord,
} from './apply-events.js';
export { provisionDevice } from './provision-device.js';
export type { ProvisionOptions } from './provision-options.js';
export {
  openSecretsRecord,
  SECRETS_RECORD_FILE,
  SECRETS_RECORD_KEY_FILE,
  type SecretsRecord,
  secretsRecordPath,
} from './secrets-record.js';
export { exportKey, importKey, type TransferOutcome } from './secrets-record-transfer.js';
export { servicePostCheck, wantsPostCheck, type PostCheckTarget } from './service-post-check.js';
export { secretsRecordProblem } from './secrets-record-access.js';
export { cutBy, STOP_SIGNALS, type StopSignal, StoppedBySignalError, stepRange } from './stopped-run.js';
export { limitProblem } from './apply-stick.js';
