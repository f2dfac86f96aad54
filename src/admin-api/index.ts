// The Admin API v1's vocabulary (docs/device-model.md): one zod schema and type per device thing,
// shared by the client, the plan, apply and the simulator.
export * from './vocabulary.js';
export * from './stanza.js';
export * from './device-interface.js';
export * from './acl-rule.js';
export * from './capability.js';
export * from './device-trust.js';
export * from './wire-shape.js';
export * from './device-clock.js';
