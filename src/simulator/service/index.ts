/**
 * The simulated monitoring service (data API, area A): used by tests, and by `mpprov simulate
 * --service` next to the simulated MPs. It shares no code with src/service.
 */
export { startServiceSimulator, type ServiceSimulator, type ServiceSimulatorOptions } from './service-simulator.js';
export type { ServiceFaultSpec } from './service-faults.js';
export { startSimulatedService, type SimulatedServiceSetup } from './start-simulated-service.js';
