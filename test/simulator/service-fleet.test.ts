import { afterAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../src/simulator/index.js';
import { startSimulatedService, type SimulatedServiceSetup } from '../../src/simulator/service/index.js';
import { runCli, useProcesses } from '../support/run-cli.js';
import { apiClient } from './sim-client.js';
import { rawCaller } from './service-rig.js';

/**
 * The service beside a fleet (`mpprov simulate --devices N --service`): MPs spread over
 * organizations round-robin, and a path whose data stops while its real simulated device restarts.
 */

const processes = useProcesses();
let fleet: Fleet | undefined;
let setup: SimulatedServiceSetup | undefined;
afterAll(async () => {
  await fleet?.close();
  await setup?.service.close();
});

describe('a fleet in several organizations', () => {
  it('registers MP n in organization 12 + (n mod K), and a restart of the device pauses its paths', async () => {
    setup = await startSimulatedService({
      devices: 5,
      hostname: 'fleet-mp',
      reconnectMs: 100,
      organizations: 2,
      pathDataMs: 300,
    });
    const password = 'fleet-Pw-4471-admin';
    fleet = await startFleet(5, { password, restartMs: 300, serviceRateLimit: false, hooks: setup.hooks });
    const service = rawCaller(setup.service, setup.service.token);
    try {
      expect((await service.get('/api/v3/organization')).json).toEqual([
        { id: 12, displayName: 'Branch Networks' },
        { id: 13, displayName: 'Branch Networks 2' },
      ]);
      const inOrg = async (orgId: number) =>
        ((await service.get(`/api/v3/appliance?orgId=${orgId}`)).json as { name: string; resolvedIp: string }[]).map(
          (a) => `${a.name} ${a.resolvedIp}`,
        );
      expect(await inOrg(12)).toEqual(['fleet-mp-1 127.0.0.1', 'fleet-mp-3 127.0.0.1', 'fleet-mp-5 127.0.0.1']);
      expect(await inOrg(13)).toEqual(['fleet-mp-2 127.0.0.1', 'fleet-mp-4 127.0.0.1']);

      // fleet-mp-2 is another simulated MP (in the other organization): a dual-ended path.
      const created = await service.call('POST', '/api/v3/path', {
        body: { sourceAppliance: 'fleet-mp-1', target: 'fleet-mp-2', orgId: 12 },
      });
      expect(created).toMatchObject({ status: 201, json: { instrumentation: 'TWO_WAY' } });
      const id = (created.json as { id: number }).id;
      const status = async () => ((await service.get(`/api/v3/path/${id}/status`)).json as { status: string }).status;
      await waitUntil(async () => (await status()) === 'SQA_NOT_VIOLATED');

      const device = fleet.devices[0];
      expect(device).toBeDefined();
      if (device === undefined) return;
      expect((await apiClient(device).put('/service/networking/?action=restart', {})).status).toBe(202);
      expect(await status()).toBe('INDETERMINATE');
      await waitUntil(async () => (await status()) === 'SQA_NOT_VIOLATED');
      expect(device.state().restarts).toBe(1);
    } finally {
      await service.close();
    }
  });
});

describe('mpprov simulate --service-orgs, --service-path-data-ms, --service-legacy-shapes', () => {
  it("prints each MP's organization, the delay and the shapes, and serves them", async () => {
    const { child, firstLine, exited } = await processes.startCli([
      'simulate',
      '--json',
      '--devices',
      '3',
      '--service',
      '--service-orgs',
      '2',
      '--service-path-data-ms',
      '400',
      '--service-legacy-shapes',
    ]);
    const info = JSON.parse(firstLine) as {
      control_url: string;
      service: { url: string; token: string; ca_pem: string; org_ids: number[]; path_data_ms: number; shapes: string };
    };
    expect(info.service).toMatchObject({ org_ids: [12, 13, 12], path_data_ms: 400, shapes: 'legacy' });
    const service = rawCaller({ url: info.service.url, caPem: info.service.ca_pem }, info.service.token);
    try {
      expect((await service.get('/api/v3/organization')).json).toEqual([
        { id: 12, name: 'Branch Networks' },
        { id: 13, name: 'Branch Networks 2' },
      ]);
      await service.get('/api/v3/path?orgId=13');
      // The control port counts the service's requests per kind, for a bench run against the CLI.
      const log = (await (await fetch(`${info.control_url}/_sim/service/requests`)).json()) as {
        counts: Record<string, number>;
        requests: { kind: string; caller: string }[];
      };
      expect(log.counts).toEqual({ 'organization-list': 1, 'path-list': 1 });
      expect(log.requests.map((r) => `${r.kind} ${r.caller}`)).toEqual([
        'organization-list simulate',
        'path-list simulate',
      ]);
      expect(JSON.stringify(log)).not.toContain(info.service.token);
      expect((await fetch(`${info.control_url}/_sim/service/requests`, { method: 'DELETE' })).status).toBe(200);
      const cleared = (await (await fetch(`${info.control_url}/_sim/service/requests`)).json()) as { counts: object };
      expect(cleared.counts).toEqual({});
    } finally {
      await service.close();
    }
    child.kill('SIGTERM');
    expect((await exited).code).toBe(0);
  });

  it.each([
    [['--service-orgs', '0'], 'mpprov simulate: --service-orgs must be an integer from 1 to 1000; "0" is not.\n'],
    [
      ['--service-path-data-ms', 'soon'],
      'mpprov simulate: --service-path-data-ms must be an integer from 0 to 3600000; "soon" is not.\n',
    ],
  ])('refuses %j with exit status 64', async (args, message) => {
    const result = await runCli(['simulate', '--service', ...args]);
    expect(result.stderr).toBe(message);
    expect(result.code).toBe(64);
  });
});

async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the condition did not come true within 10 s');
}
