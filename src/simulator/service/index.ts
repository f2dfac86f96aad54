/**
 * The simulated monitoring service (data API, area A, and observers with event delivery, area B):
 * used by tests, and by `mpprov simulate --service` next to the simulated MPs. It shares no code
 * with src/service.
 */
export { startServiceSimulator, type ServiceSimulator, type ServiceSimulatorOptions } from './service-simulator.js';
export type { ServiceFaultSpec } from './service-faults.js';
export type { DeliveryFault } from './delivery-faults.js';
export type { DeliveryLogEntry, DeliveryOutcome } from './delivery-log.js';
export type { ObserverJson } from './observer-registry.js';
export type { ServiceEvent } from './service-events.js';
export { startSimulatedService, type SimulatedServiceSetup } from './start-simulated-service.js';
