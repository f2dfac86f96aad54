import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/config/index.js';
import { startFleet, type Fleet } from '../../src/simulator/index.js';
import { startSimulatedService, type SimulatedServiceSetup } from '../../src/simulator/service/index.js';
import { applyFile } from '../apply/apply-helpers.js';
import { testAgentConfig } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';
import { busiestWindow } from './service-fixtures.js';

/**
 * A fleet of 200 MPs provisioned in one run with the post-check: the run's one client and rate
 * limiter keep every request within the service's 50 per 10 s, counted on the service's side,
 * and every MP is confirmed. The service is the one `mpprov simulate --service --devices` runs,
 * its MPs following the devices' restarts through the device hooks.
 */

const COUNT = 200;
let fleet: Fleet | undefined;
let setup: SimulatedServiceSetup | undefined;
afterAll(async () => {
  await fleet?.close();
  await setup?.service.close();
});

describe('a 200-device fleet with the post-check', () => {
  it('stays within 50 requests per 10 s and confirms every MP', async () => {
    setup = await startSimulatedService({ devices: COUNT, hostname: 'fleet-mp', reconnectMs: 0 });
    const password = 'fleet-Pw-0815-admin';
    fleet = await startFleet(COUNT, { password, restartMs: 50, hooks: setup.hooks });
    expect(fleet.devices).toHaveLength(COUNT);
    const dir = tempFolder('fleet-stick');
    writeFileSync(join(dir, 'admin.pw'), `${password}\n`);
    const lines = ['version: 1', 'monitoring_points:'];
    fleet.devices.forEach((device, index) => {
      lines.push(
        `  - name: fleet-mp-${index + 1}`,
        `    url: ${device.url}`,
        '    password_file: admin.pw',
        `    tls: { fingerprint_sha256: "${device.fingerprintSha256}" }`,
        '    interfaces:',
        '      eth1:',
        '        ipv4: { method: static, address: 192.0.2.10/24, gateway: 192.0.2.1 }',
      );
    });
    const file = join(dir, 'mpprov.yaml');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const service = setup.service;
    const agent = testAgentConfig({
      service: { url: service.url, token: new Secret(service.token), caPem: service.caPem, waitConnectedS: 120 },
    });

    const started = Date.now();
    const { result } = await applyFile(file, {
      agent,
      concurrency: 32,
      serviceBackoff: { firstMs: 500, maxMs: 2_000 },
    });
    const tookMs = Date.now() - started;

    expect(result.outcome).toBe('changed');
    expect(result.devices).toHaveLength(COUNT);
    expect(result.devices.filter((d) => d.service?.kind === 'connected')).toHaveLength(COUNT);
    const requests = service.requests();
    // Confirmed in rounds: one list request per organization per round answers every waiting MP,
    // not a poll per MP (docs/service-model.md, "Fleet rounds").
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.length).toBeLessThanOrEqual(COUNT / 20 + 20);
    expect(requests.filter((r) => r.status === 429)).toEqual([]);
    expect(
      busiestWindow(
        requests.map((r) => r.atMs),
        10_000,
      ),
    ).toBeLessThanOrEqual(50);
    // For the report: how long 200 devices and their post-checks took.
    console.log(
      `200-device fleet with the post-check: ${requests.length} service requests, ${(tookMs / 1000).toFixed(1)} s`,
    );
  }, 240_000);
});
