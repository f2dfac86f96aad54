/**
 * The simulated monitoring service (data API, area A): used by tests, and by `mpprov simulate
 * --service` next to the simulated MPs. It shares no code with src/service.
 */
export {
  startServiceSimulator,
  SIM_BASE_PATH,
  type ServiceSimulator,
  type ServiceSimulatorOptions,
} from './service-simulator.js';
export type { SimTokenSpec, SimUserSpec } from './service-callers.js';
export type { ServiceFaultSpec } from './service-faults.js';
export type { ServiceLogEntry } from './service-request-log.js';
export { SIM_DATA_API_LIMIT, type CallerLimit } from './caller-rate-limit.js';
export {
  SIM_CONNECTION_STATUSES,
  SIM_ERRORS,
  type ApplianceJson,
  type ApplianceRegistration,
  type OrganizationJson,
  type SimConnectionStatus,
} from './service-wire.js';
export { startSimulatedService, type SimulatedServiceSetup } from './start-simulated-service.js';
