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
// The service side's functions are imported from service-side.ts itself (the agent) or on first
// use (apply-stick.ts): from here they would load the service's client and models at every start
// of plan and apply, with or without a service block.
export type { ServiceSide } from './service-side.js';
export { UpdateSecrets, UPDATE_SECRETS_CHOICES } from './secret-update-policy.js';
