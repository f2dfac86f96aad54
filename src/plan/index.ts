// The plan: what the stick wants, what the device has, the steps between. Pure: no I/O.
// The device's own things (stanza, interface view, ACL rule, capability) are admin-api's types.
export { buildPlan } from './build-plan.js';
export { indexStanzas } from './index-stanzas.js';
export { compareStanza, configFields, normaliseFields } from './compare-stanzas.js';
export { desiredDevice } from './desired-state.js';
export { managementInterface } from './lockout-guard.js';
export {
  type DesiredDevice,
  type DesiredFile,
  type DesiredInterface,
  type DesiredStanza,
  type DeviceSnapshot,
  type Dot1xFacts,
  type ExpectedStanza,
  type FieldChange,
  type Plan,
  type PlanOptions,
  type StanzaChange,
  type Step,
} from './plan-types.js';
export { describeStep } from './describe-step.js';
export { vlanRuleOrder, type OrderedRequest } from './vlan-order.js';
