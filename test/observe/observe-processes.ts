import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { expect } from 'vitest';
import { rawCaller } from '../simulator/service-rig.js';
import type { Processes, StartedProcess } from '../support/run-cli.js';
import { stickWithConfig } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * Real processes for `mpprov observe` end to end: `mpprov simulate --devices N --service` (a
 * fleet, its service, the control port), agent.yaml with `service.events`, `mpprov observe`, and a
 * stick for `mpprov apply`. Everything on loopback.
 */

export interface FleetDevice {
  url: string;
  password: string;
  fingerprint_sha256: string;
}

export interface SimFleet {
  process: StartedProcess;
  devices: FleetDevice[];
  service: { url: string; token: string; ca_pem: string; token_file: string; ca_file: string; hostnames: string[] };
  /** The control port's `/_sim/service/...` endpoints: JSON in, JSON out. */
  control(path: string, init?: { method: string; body?: unknown }): Promise<Record<string, unknown>>;
  /** Every configuration of the token's user, as GET /v3/observer answers (rate limited: not for polling). */
  observers(): Promise<ObserverJson[]>;
  /** Every configuration through the control port (not rate limited, for polling). */
  controlObservers(): Promise<ObserverJson[]>;
}

export interface ObserverJson {
  url: string;
  blacklisted: boolean;
  [kind: string]: unknown;
}

export async function startSimFleet(
  processes: Processes,
  options: { devices: number; hostname: string; password: string; reconnectMs: number; extra?: string[] },
): Promise<SimFleet> {
  const files = join(tempFolder('sim-fleet'), 'files');
  const process = await processes.startCli([
    'simulate',
    '--json',
    '--devices',
    String(options.devices),
    '--password',
    options.password,
    '--restart-ms',
    '300',
    '--service',
    '--service-hostname',
    options.hostname,
    '--service-reconnect-ms',
    String(options.reconnectMs),
    '--service-files',
    files,
    ...(options.extra ?? []),
  ]);
  const line = JSON.parse(process.firstLine) as {
    control_url: string;
    devices: FleetDevice[];
    service: SimFleet['service'];
  };
  const origin = new URL(line.control_url).origin;
  const caller = rawCaller({ url: line.service.url, caPem: line.service.ca_pem }, line.service.token);
  return {
    process,
    devices: line.devices,
    service: line.service,
    control: async (path, init) => {
      const res = await fetch(`${origin}${path}`, {
        method: init?.method ?? 'GET',
        ...(init?.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      return (await res.json()) as Record<string, unknown>;
    },
    controlObservers: async () => {
      const res = await fetch(`${origin}/_sim/service/observers`);
      return ((await res.json()) as { observers: ObserverJson[] }).observers;
    },
    observers: async () => {
      const answer = await caller.get('/api/v3/observer');
      expect(answer.status).toBe(200);
      return answer.json as ObserverJson[];
    },
  };
}

/** agent.yaml for the fleet's service with an events block; its state folder beside it. */
export function agentYaml(
  fleet: SimFleet,
  events: { listen: string; publicUrl: string; checkS: number; tls?: { cert: string; key: string } },
  waitConnectedS = 60,
): { file: string; state: string } {
  const dir = tempFolder('observe-agent');
  const state = join(dir, 'state');
  mkdirSync(state, { mode: 0o700 });
  const file = join(dir, 'agent.yaml');
  writeFileSync(
    file,
    [
      `state_dir: ${state}`,
      'service:',
      `  url: ${fleet.service.url}`,
      `  token_file: ${fleet.service.token_file}`,
      `  tls: { ca: ${fleet.service.ca_file} }`,
      `  wait_connected_s: ${waitConnectedS}`,
      '  events:',
      `    listen: "${events.listen}"`,
      `    public_url: ${events.publicUrl}`,
      `    check_s: ${events.checkS}`,
      ...(events.tls === undefined ? [] : [`    tls: { cert: ${events.tls.cert}, key: ${events.tls.key} }`]),
      '',
    ].join('\n'),
  );
  return { file, state };
}

/** A stick for the fleet's devices `indexes` (0-based), each named as the service knows it, with a new eth1 address. */
export function fleetStick(fleet: SimFleet, indexes: readonly number[]): string {
  const lines = ['version: 1', 'monitoring_points:'];
  for (const i of indexes) {
    const device = fleet.devices[i];
    if (device === undefined) throw new Error(`the fleet has no device ${i}`);
    lines.push(
      `  - name: ${fleet.service.hostnames[i] ?? ''}`,
      `    url: ${device.url}`,
      '    password_file: secrets/admin.pw',
      `    tls: { fingerprint_sha256: "${device.fingerprint_sha256}" }`,
      '    interfaces:',
      '      eth1:',
      `        ipv4: { method: static, address: 198.51.100.${20 + i}/24, gateway: 198.51.100.1 }`,
    );
  }
  return stickWithConfig(`${lines.join('\n')}\n`);
}

const insecure = new Agent({ connect: { rejectUnauthorized: false } });

/** A networking restart through the device's Admin API: its MP goes UNAVAILABLE, then AVAILABLE after the reconnect delay. */
export async function restartDevice(device: FleetDevice): Promise<void> {
  const answer = await request(`${device.url}/api/v1/service/networking/?action=restart`, {
    method: 'PUT',
    dispatcher: insecure,
    headers: {
      authorization: `Basic ${Buffer.from(`admin:${device.password}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: '{}',
  });
  await answer.body.dump();
  expect(answer.statusCode).toBe(202);
}

/** Polls `done` every `everyMs` until it holds or `ms` passed; then asserts it. */
export async function until(done: () => boolean | Promise<boolean>, ms = 30_000, everyMs = 100): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end && !(await done())) await new Promise((r) => setTimeout(r, everyMs));
  expect(await done()).toBe(true);
}
