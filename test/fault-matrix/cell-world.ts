import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSimulator, type SimulatorHandle } from '../../src/simulator/index.js';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { startService, TOKEN } from '../service/service-fixtures.js';
import { PROFILE_ADMIN_PASSWORD, PROFILE_DEVICE } from '../support/stick-workspace.js';
import type { Fault, ProfileTraits } from './matrix.js';

/**
 * What one cell of the matrix runs against: a simulated device with the fault (over real HTTPS on
 * loopback), and for the service faults a simulated monitoring service of its own (so cells running
 * side by side never share a fault), told of the device's restarts through its hooks. Plus the
 * agent.yaml lines both runners use: short timeouts, so the whole matrix stays within minutes.
 */

/** The name every profile gives its Monitoring Point, and so its hostname in the service. */
export const DEVICE_NAME = 'branch-12-mp1';

/** Short, but with room for a loaded machine: a loopback answer takes milliseconds. */
export const MATRIX_TIMEOUTS = { requestS: 3, restartS: 3, dot1xS: 1, serviceWaitS: 2 } as const;

export interface CellDevice {
  sim: SimulatorHandle;
  service?: ServiceSimulator;
  close(): Promise<void>;
}

export async function startCellDevice(fault: Fault): Promise<CellDevice> {
  let service: ServiceSimulator | undefined;
  if (fault.service !== undefined) {
    service = await startService({ reconnectMs: 300 });
    service.registerAppliance({ hostname: DEVICE_NAME, orgId: 12 });
  }
  const watching = service;
  const sim = await startSimulator({
    ...PROFILE_DEVICE,
    faults: fault.device ?? [],
    ...fault.simulator,
    ...(watching === undefined
      ? {}
      : {
          hooks: {
            restartStarted: () => watching.restartStarted(DEVICE_NAME),
            answeringAgain: () => watching.answeringAgain(DEVICE_NAME),
          },
        }),
  });
  if (service !== undefined) fault.service?.(service);
  return {
    sim,
    ...(service === undefined ? {} : { service }),
    async close() {
      await sim.close();
      await service?.close();
    },
  };
}

/**
 * agent.yaml's lines for a cell besides where it looks for sticks: the state folder, the matrix's
 * timeouts, and the service block (its token and CA written into `dir`) when the cell has a service.
 */
export function agentYamlLines(dir: string, stateDir: string, service: ServiceSimulator | undefined): string[] {
  const { requestS, restartS, dot1xS, serviceWaitS } = MATRIX_TIMEOUTS;
  const lines = [
    'version: 1',
    `state_dir: ${stateDir}`,
    // No boot window: a cell's device that does not answer at the first contact fails at once.
    `timeouts: { request_s: ${requestS}, restart_s: ${restartS}, dot1x_s: ${dot1xS}, connect_s: 0 }`,
  ];
  if (service !== undefined) {
    writeFileSync(join(dir, 'service.token'), `${TOKEN}\n`, { mode: 0o600 });
    writeFileSync(join(dir, 'service-ca.pem'), service.caPem);
    lines.push(
      'service:',
      `  url: ${service.url}`,
      `  token_file: ${join(dir, 'service.token')}`,
      `  tls: { ca: ${join(dir, 'service-ca.pem')} }`,
      `  wait_connected_s: ${serviceWaitS}`,
    );
  }
  return lines;
}

/** Every secret a cell's outputs must not hold, in any form: the admin password, the profile's, the service token. */
export function cellSecrets(profile: ProfileTraits): string[] {
  return [PROFILE_ADMIN_PASSWORD, ...profile.secrets, TOKEN];
}
