export { buildPlan, indexStanzas } from './build-plan.js';
export { compareStanza, configFields, normaliseFields, type FieldChange, type SecretKnown } from './compare-stanzas.js';
export { desiredDevice, uploadName } from './desired-state.js';
export { managementInterface } from './lockout-guard.js';
export {
  StanzaAction,
  type DeviceCapability,
  type DeviceSnapshot,
  type ExpectedStanza,
  type Plan,
  type PlanOptions,
  type PlanRefusal,
  type StanzaChange,
  type Step,
} from './plan-types.js';
export {
  FILE_SLOTS,
  Family,
  SECRET_FIELDS,
  stanzaKey,
  type DesiredAclRule,
  type DesiredDevice,
  type DesiredFile,
  type DesiredInterface,
  type DesiredStanza,
  type DeviceInterfaceView,
  type DeviceStanza,
  type FieldValue,
  type FileSlot,
  type RouteField,
  type SecretField,
  type StanzaFields,
} from './stanza.js';
export { describeStep } from './describe-step.js';
