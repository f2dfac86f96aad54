import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApplyEvent, DeviceResult } from '../../src/apply/index.js';
import { type AgentConfig, Secret } from '../../src/config/index.js';
import { concludeJob, createEventFormatter } from '../../src/report/index.js';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig, testAgentConfig } from '../support/stick-workspace.js';
import { expectNoSecret, startService, TOKEN } from '../service/service-fixtures.js';
import { applyFile } from './apply-helpers.js';

/**
 * A stick's paths after the post-check: a simulated MP and the simulated service over real HTTPS,
 * linked by the device's event hooks, so the MP is AVAILABLE only after its real restart and a
 * path's data starts only then (the service's first-data delay after that).
 */

const STICK_PATHS = `    paths:
      - target: 192.0.2.80
        location: Datacenter Frankfurt
      - target: app.example.com
    interfaces:
      eth1:
        ipv4: { method: static, address: 192.0.2.10/24, gateway: 192.0.2.1 }
`;
const FAST = { firstMs: 200, maxMs: 400 };

let service: ServiceSimulator;
const known = (hostname: string) => service.appliances().some((a) => a.hostname === hostname);
const { start } = useSimulators({
  ...PROFILE_DEVICE,
  restartMs: 300,
  hooks: {
    restartStarted: () => known('mp1') && service.restartStarted('mp1'),
    answeringAgain: () => known('mp1') && service.answeringAgain('mp1'),
    managementDot1xFailed: () => known('mp1') && service.managementDot1xFailed('mp1'),
  },
});

// A service of its own per test: paths, once created, stay (mpprov never deletes one).
beforeEach(async () => {
  await service?.close();
  service = await startService({ reconnectMs: 300, pathDataMs: 400, pathSampleMs: 1000 });
  service.registerAppliance({ hostname: 'mp1', orgId: 12, macAddress: '00:1b:21:3a:4f:10' });
});
afterAll(async () => service?.close());

function agentWith(overrides: Partial<NonNullable<AgentConfig['service']>> = {}): AgentConfig {
  return testAgentConfig({
    service: {
      url: service.url,
      token: new Secret(TOKEN),
      caPem: service.caPem,
      waitConnectedS: 10,
      waitMeasuringS: 15,
      ...overrides,
    },
  });
}

const lastResult = (events: ApplyEvent[]): DeviceResult | undefined => {
  const last = events.at(-1);
  return last?.type === 'device-result' ? last.result : undefined;
};

describe('paths after the post-check', () => {
  it('creates the missing paths, sets the location, then waits until both measure; said in every output', async () => {
    const device = await start();
    const file = stickWithConfig(stickHead(device, STICK_PATHS));
    const { result, events } = await applyFile(file, { agent: agentWith(), serviceBackoff: FAST });
    expect(result.outcome).toBe('changed');
    const paths = result.devices[0]?.service?.paths;
    expect(paths).toHaveLength(2);
    expect(paths?.[0]).toMatchObject({
      target: '192.0.2.80',
      created: true,
      measuring: true,
      location: 'Datacenter Frankfurt',
    });
    expect(paths?.[1]).toMatchObject({ target: 'app.example.com', created: true, measuring: true });
    for (const path of paths ?? []) {
      expect(typeof path.id).toBe('number');
      expect(typeof path.status).toBe('string');
    }
    // The service holds exactly these two paths, the location on the first, created once each.
    expect(service.paths().map((p) => [p.sourceAppliance, p.target, p.targetLocation ?? null])).toEqual([
      ['mp1', '192.0.2.80', 'Datacenter Frankfurt'],
      ['mp1', 'app.example.com', null],
    ]);
    expect(service.requestCounts()['path-create']).toBe(2);
    expect(service.requestCounts()['path-delete'] ?? 0).toBe(0);

    // Events: the paths follow the check; a path is created before it measures; one device-result carries it all.
    const types = events.map((e) => e.type);
    expect(types.indexOf('service-paths-start')).toBeGreaterThan(types.indexOf('service-check-done'));
    expect(types.at(-2)).toBe('service-paths-done');
    expect(lastResult(events)?.service?.paths).toEqual(paths);
    // Created (and waiting for its first data) first, measuring at the end.
    const created = events.filter((e) => e.type === 'service-path' && e.target === '192.0.2.80');
    expect(created).toContainEqual(
      expect.objectContaining({
        created: true,
        measuring: false,
        sentence: 'path to 192.0.2.80: created, waiting for its first data',
      }),
    );
    expect(types.lastIndexOf('service-path')).toBeLessThan(types.indexOf('service-paths-done'));

    // usb.log's words and the RESULT line, from the same events.
    const format = createEventFormatter();
    const lines = events.flatMap((e) => format(e)).map((l) => l.text);
    expect(lines).toContain(
      '[mp1] paths: making sure 2 path(s) exist and measure, for up to 15 s: 192.0.2.80, app.example.com',
    );
    expect(lines.some((l) => /^\[mp1\] path to 192\.0\.2\.80: created, measuring/.test(l))).toBe(true);
    expect(concludeJob({ result, configName: 'mpprov.yaml', stopped: false })).toEqual({
      word: 'CHANGED',
      summary: 'mp1: changed and verified, service: connected, 2/2 paths measuring',
    });
  });

  it('a second run finds both paths, creates nothing, and they still measure', async () => {
    const device = await start();
    const file = stickWithConfig(stickHead(device, STICK_PATHS));
    await applyFile(file, { agent: agentWith(), serviceBackoff: FAST });
    service.clearRequests();
    const again = await applyFile(file, { agent: agentWith(), serviceBackoff: FAST });
    expect(again.result.outcome).toBe('no-change');
    expect(again.result.devices[0]?.service?.paths?.map((p) => [p.target, p.created, p.measuring])).toEqual([
      ['192.0.2.80', false, true],
      ['app.example.com', false, true],
    ]);
    expect(service.requestCounts()['path-create'] ?? 0).toBe(0);
    expect(service.requestCounts()['path-location'] ?? 0).toBe(0);
  });

  it('a path with no data within wait_measuring_s is said so, and the device stays changed', async () => {
    const slow = await startService({ reconnectMs: 300, pathDataMs: 60_000 });
    try {
      slow.registerAppliance({ hostname: 'mp1', orgId: 12 });
      const device = await start({
        hooks: { restartStarted: () => slow.restartStarted('mp1'), answeringAgain: () => slow.answeringAgain('mp1') },
      });
      const agent = testAgentConfig({
        service: {
          url: slow.url,
          token: new Secret(TOKEN),
          caPem: slow.caPem,
          waitConnectedS: 10,
          waitMeasuringS: 2,
        },
      });
      const { result } = await applyFile(stickWithConfig(stickHead(device, STICK_PATHS)), {
        agent,
        serviceBackoff: FAST,
      });
      expect(result.outcome).toBe('changed');
      const mp = result.devices[0];
      expect(mp?.outcome).toBe('changed');
      expect(mp?.service?.connected).toBe(true);
      expect(mp?.service?.paths?.map((p) => [p.target, p.created, p.measuring])).toEqual([
        ['192.0.2.80', true, false],
        ['app.example.com', true, false],
      ]);
      expect(mp?.service?.paths?.[0]?.sentence).toMatch(/^path to 192\.0\.2\.80: created, not measuring after /);
      expect(concludeJob({ result, configName: 'mpprov.yaml', stopped: false }).summary).toBe(
        'mp1: changed and verified, service: connected, 0/2 paths measuring',
      );
    } finally {
      await slow.close();
    }
  });

  it('an MP not confirmed connected gets no path created; its paths are said not checked', async () => {
    const device = await start();
    service.setConnectionStatus('mp1', 'BLOCKED');
    const { result } = await applyFile(stickWithConfig(stickHead(device, STICK_PATHS)), {
      agent: agentWith({ waitConnectedS: 2 }),
      serviceBackoff: FAST,
    });
    expect(result.devices[0]?.outcome).toBe('changed');
    expect(result.devices[0]?.service?.kind).toBe('blocked');
    expect(result.devices[0]?.service?.paths).toEqual([
      {
        target: '192.0.2.80',
        id: null,
        created: false,
        measuring: false,
        status: null,
        sentence: 'path to 192.0.2.80: not checked: the service does not confirm the MP connected',
      },
      {
        target: 'app.example.com',
        id: null,
        created: false,
        measuring: false,
        status: null,
        sentence: 'path to app.example.com: not checked: the service does not confirm the MP connected',
      },
    ]);
    expect(service.requestCounts()['path-create'] ?? 0).toBe(0);
  });

  it('without a service block: paths not checked, said, and nothing asked', async () => {
    const device = await start();
    const { result, events } = await applyFile(stickWithConfig(stickHead(device, STICK_PATHS)), {
      agent: testAgentConfig(),
    });
    const mp = result.devices[0];
    expect(mp?.outcome).toBe('changed');
    expect(mp?.service).toBeUndefined();
    expect(mp?.pathsNotChecked?.map((p) => p.sentence)).toEqual([
      'path to 192.0.2.80: not checked (no service configured)',
      'path to app.example.com: not checked (no service configured)',
    ]);
    expect(events).toContainEqual({
      type: 'warning',
      device: 'mp1',
      message: '2 path(s) not checked (no service configured): agent.yaml has no service block',
    });
    expect(concludeJob({ result, configName: 'mpprov.yaml', stopped: false }).summary).toBe(
      'mp1: changed and verified, 2 paths not checked (no service configured)',
    );
    expect(service.requests()).toEqual([]);
  });

  it('a dry run lists the paths it would create, reading the service only', async () => {
    const device = await start();
    const { result, events } = await applyFile(stickWithConfig(stickHead(device, STICK_PATHS)), {
      agent: agentWith(),
      dryRun: true,
    });
    expect(result.devices[0]?.service).toBeUndefined();
    const listed = events.find((e) => e.type === 'service-paths-plan');
    expect(listed).toEqual({
      type: 'service-paths-plan',
      device: 'mp1',
      hostname: 'mp1',
      paths: [
        { target: '192.0.2.80', action: 'create', sentence: 'path to 192.0.2.80: would be created' },
        { target: 'app.example.com', action: 'create', sentence: 'path to app.example.com: would be created' },
      ],
    });
    expect(service.requests().length).toBeGreaterThan(0);
    expect(service.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    expect(service.paths()).toEqual([]);
  });

  it('the token appears in no event, result or state file', async () => {
    const device = await start();
    const agent = agentWith();
    const { result, events } = await applyFile(stickWithConfig(stickHead(device, STICK_PATHS)), {
      agent,
      serviceBackoff: FAST,
    });
    const stateFiles = readdirSync(agent.stateDir)
      .map((name) => join(agent.stateDir, name))
      .filter((path) => statSync(path).isFile())
      .map((path) => readFileSync(path, 'utf8'));
    expectNoSecret([JSON.stringify(events), JSON.stringify(result), ...stateFiles], [TOKEN]);
  });
});
