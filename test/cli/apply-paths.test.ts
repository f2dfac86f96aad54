import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { expectNoSecret, startService, TOKEN } from '../service/service-fixtures.js';
import { runCli } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stateDir, stickHead, stickWithConfig } from '../support/stick-workspace.js';

/**
 * `mpprov plan` and `mpprov apply` with a stick that names paths, as a technician runs them: the
 * built CLI as a child process, the simulated device and service over real HTTPS on loopback.
 */

const STICK_PATHS = `    paths:
      - target: 192.0.2.80
      - target: app.example.com
    interfaces:
      eth1:
        ipv4: { method: static, address: 192.0.2.10/24, gateway: 192.0.2.1 }
`;

let service: ServiceSimulator | undefined;
const { start } = useSimulators({
  ...PROFILE_DEVICE,
  restartMs: 300,
  hooks: {
    restartStarted: () => service?.restartStarted('mp1'),
    answeringAgain: () => service?.answeringAgain('mp1'),
  },
});

async function freshService(pathDataMs: number): Promise<ServiceSimulator> {
  await service?.close();
  service = await startService({ reconnectMs: 300, pathDataMs, pathSampleMs: 1000 });
  service.registerAppliance({ hostname: 'mp1', orgId: 12 });
  return service;
}
beforeEach(async () => {
  await freshService(400);
});
afterAll(async () => service?.close());

/** The stick with agent.yaml beside it: the service block, its token and CA in files. */
async function stickWithService(waitMeasuringS: number): Promise<{ file: string; args: string[] }> {
  const device = await start();
  const file = stickWithConfig(stickHead(device, STICK_PATHS));
  const dir = dirname(file);
  const sim = service as ServiceSimulator;
  writeFileSync(join(dir, 'service.token'), `${TOKEN}\n`, { mode: 0o600 });
  writeFileSync(join(dir, 'service-ca.pem'), sim.caPem);
  writeFileSync(
    join(dir, 'agent.yaml'),
    [
      'service:',
      `  url: ${sim.url}`,
      `  token_file: ${join(dir, 'service.token')}`,
      `  tls: { ca: ${join(dir, 'service-ca.pem')} }`,
      '  wait_connected_s: 15',
      `  wait_measuring_s: ${waitMeasuringS}`,
      '',
    ].join('\n'),
  );
  return { file, args: ['--agent-config', join(dir, 'agent.yaml'), '--state-dir', stateDir()] };
}

describe('mpprov apply with paths', () => {
  it('creates both paths and waits until they measure: the step list, the RESULT line, exit 0', async () => {
    const { file, args } = await stickWithService(20);
    const result = await runCli(['apply', file, ...args]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('[mp1] make sure 2 path(s) exist and measure (up to 20 s) ...');
    expect(result.stdout).toMatch(/\[mp1\] path to 192\.0\.2\.80: created, waiting for its first data \(\d+\.\d s\)/);
    expect(result.stdout).toMatch(/\[mp1\] path to 192\.0\.2\.80: created, measuring/);
    expect(result.stdout).toMatch(/\[mp1\] path to app\.example\.com: created, measuring/);
    expect(result.stdout).toContain('; connected to the service, 2/2 paths measuring');
    expect(result.stdout).toContain('RESULT: CHANGED (mp1 changed, connected, 2/2 paths measuring)');
    expect(service?.paths().map((p) => p.target)).toEqual(['192.0.2.80', 'app.example.com']);
    expectNoSecret([result.stdout, result.stderr], [TOKEN]);
  });

  it('--json: path events and the service object with its paths, stable fields', async () => {
    const { file, args } = await stickWithService(20);
    const result = await runCli(['apply', file, '--json', ...args]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string } & Record<string, unknown>);
    const types = lines.map((l) => l.type);
    expect(types).toContain('service-paths-start');
    expect(types).toContain('service-path');
    expect(types.indexOf('service-paths-done')).toBeGreaterThan(types.indexOf('service-paths-start'));
    const final = lines.at(-1) as { type: string; devices: { service: { paths: unknown[] } }[] };
    expect(final.type).toBe('result');
    const paths = final.devices[0]?.service.paths as Record<string, unknown>[];
    expect(paths.map((p) => Object.keys(p).sort())).toEqual([
      ['created', 'id', 'measuring', 'sentence', 'status', 'target'],
      ['created', 'id', 'measuring', 'sentence', 'status', 'target'],
    ]);
    expect(paths.map((p) => [p.target, p.created, p.measuring])).toEqual([
      ['192.0.2.80', true, true],
      ['app.example.com', true, true],
    ]);
    expectNoSecret([result.stdout, result.stderr], [TOKEN]);
  });

  it('exits 3 when a path is not confirmed measuring within wait_measuring_s; the device is not rolled back', async () => {
    await freshService(120_000);
    const { file, args } = await stickWithService(2);
    const result = await runCli(['apply', file, ...args]);
    expect(result.code, result.stdout + result.stderr).toBe(3);
    expect(result.stdout).toContain('RESULT: CHANGED (mp1 changed, connected, 0/2 paths measuring)');
    expect(result.stdout).toMatch(
      /^mp1: configured and verified, but NOT CONFIRMED by the monitoring service: path to 192\.0\.2\.80: created, not measuring after [\d.]+ s: no data since the restart.*; path to app\.example\.com: created, not measuring after/m,
    );
    expect(result.stdout).not.toContain('ROLLBACK');
  });

  it('plan lists the paths it would create, and sends the service no write', async () => {
    const { file, args } = await stickWithService(20);
    const result = await runCli(['plan', file, ...args]);
    expect(result.code, result.stdout + result.stderr).toBe(2);
    expect(result.stdout).toContain('mp1: path to 192.0.2.80: would be created');
    expect(result.stdout).toContain('mp1: path to app.example.com: would be created');
    const requests = service?.requests() ?? [];
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(service?.requestCounts()['path-create'] ?? 0).toBe(0);
    expect(service?.paths()).toEqual([]);
    const json = await runCli(['plan', file, '--json', ...args]);
    const listed = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; paths?: { action: string }[] })
      .find((l) => l.type === 'service-paths-plan');
    expect(listed?.paths?.map((p) => p.action)).toEqual(['create', 'create']);
    expect(service?.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    expectNoSecret([result.stdout, result.stderr, json.stdout, json.stderr], [TOKEN]);
  });
});
