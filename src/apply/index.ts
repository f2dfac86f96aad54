export { MP_BOOTING } from './apply-events.js';
export {
  applyStick,
  notConfirmed,
  stickSecrets,
  StickOutcome,
  type StickApplyOptions,
  type StickResult,
} from './apply-stick.js';
export { Outcome, type ApplyEvent, type DeviceResult } from './apply-events.js';
export { openSecretsRecord, SECRETS_RECORD_FILE, SECRETS_RECORD_KEY_FILE } from './secrets-record.js';
export { exportKey, importKey, type TransferOutcome } from './secrets-record-transfer.js';
export { secretsRecordProblem } from './secrets-record-access.js';
export { stepRange } from './stopped-run.js';
export { limitProblem } from './apply-stick.js';
export { pathsWords } from './path-report.js';
export { createServiceSide, sameService, type ServiceSide } from './service-side.js';
export { UpdateSecrets, UPDATE_SECRETS_CHOICES } from './secret-update-policy.js';
