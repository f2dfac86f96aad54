import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApplyEvent } from '../../src/apply/index.js';
import { type AgentConfig, Secret } from '../../src/config/index.js';
import type { DeviceEventHooks, SimulatorHandle } from '../../src/simulator/index.js';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { closedPort } from '../support/failures.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig, testAgentConfig } from '../support/stick-workspace.js';
import { expectNoSecret, OTHER_TOKEN, startService, TOKEN } from '../service/service-fixtures.js';
import { applyFile } from './apply-helpers.js';

/**
 * The post-check wired into apply: a simulated MP and the simulated service over real HTTPS,
 * linked by the device's event hooks, so the MP's connectionStatus follows its real restart.
 */

const ETH1 = (address: string) => `    interfaces:
      eth1:
        ipv4: { method: static, address: ${address}/24, gateway: 192.0.2.1 }
`;
const FAST = { firstMs: 150, maxMs: 300 };

let service: ServiceSimulator;
/** Device events as the service saw them, with times: the test's view of the restart. */
const deviceEvents: { event: string; hostname: string; atMs: number }[] = [];
const known = (hostname: string) => service.appliances().some((a) => a.hostname === hostname);
const hooks = (hostname: string): DeviceEventHooks => ({
  restartStarted: () => {
    deviceEvents.push({ event: 'restart', hostname, atMs: Date.now() });
    if (known(hostname)) service.restartStarted(hostname);
  },
  answeringAgain: () => {
    deviceEvents.push({ event: 'answering', hostname, atMs: Date.now() });
    if (known(hostname)) service.answeringAgain(hostname);
  },
  managementDot1xFailed: () => known(hostname) && service.managementDot1xFailed(hostname),
});
const { start } = useSimulators({ ...PROFILE_DEVICE, restartMs: 300, hooks: hooks('mp1') });

beforeAll(async () => {
  service = await startService({ reconnectMs: 400 });
});
afterAll(async () => service?.close());
beforeEach(() => {
  service.clearFaults();
  service.clearRequests();
  deviceEvents.length = 0;
  if (service.appliances().some((a) => a.hostname === 'mp1')) service.unregisterAppliance('mp1');
  service.registerAppliance({ hostname: 'mp1', orgId: 12, macAddress: '00:1b:21:3a:4f:10' });
});

function agentWith(overrides: Partial<NonNullable<AgentConfig['service']>> = {}): AgentConfig {
  return testAgentConfig({
    service: { url: service.url, token: new Secret(TOKEN), caPem: service.caPem, waitConnectedS: 4, ...overrides },
  });
}

async function applyTo(
  device: SimulatorHandle,
  agent: AgentConfig,
  extra = ETH1('192.0.2.10'),
  file = stickWithConfig(stickHead(device, extra)),
) {
  return { file, ...(await applyFile(file, { agent, serviceBackoff: FAST })) };
}

const serviceEvents = (events: ApplyEvent[]) => events.filter((e) => e.type.startsWith('service-'));

describe('connected to the service', () => {
  it('waits out the restart and the reconnect delay, then says "connected to the service"; polling starts only after the restart', async () => {
    const device = await start();
    const agent = agentWith();
    const { result, events } = await applyTo(device, agent);
    expect(result.outcome).toBe('changed');
    const mp = result.devices[0];
    expect(mp?.outcome).toBe('changed');
    expect(mp?.service).toMatchObject({
      kind: 'connected',
      connected: true,
      hostname: 'mp1',
      sentence: 'connected to the service',
    });
    expect(mp?.service?.appliance).toMatchObject({ orgId: 12, macAddress: '00:1b:21:3a:4f:10' });

    // The restart, as the device reported it, and the service's requests, by their own clocks.
    const answered = deviceEvents.find((e) => e.event === 'answering');
    const restarted = deviceEvents.find((e) => e.event === 'restart');
    expect(restarted).toBeDefined();
    expect(answered).toBeDefined();
    // Asked by hostname first, then (its id known) by id: every look at the MP counts.
    const polls = service.requests().filter((r) => r.kind === 'appliance-list' || r.kind === 'appliance-get');
    expect(polls.length).toBeGreaterThan(0);
    expect(polls[0]?.atMs).toBeGreaterThanOrEqual(answered?.atMs ?? Infinity);
    // The reconnect delay (400 ms) was really waited: the last poll saw AVAILABLE after it. Counted
    // from the restart: the device is back before its first answered request is logged, and on a
    // loaded machine that gap alone can exceed the delay.
    expect(polls.at(-1)?.atMs).toBeGreaterThanOrEqual((restarted?.atMs ?? 0) + 400);

    // Events: the check follows the device's last step, and the one device-result carries it.
    const types = events.map((e) => e.type);
    const lastStep = types.lastIndexOf('step-done');
    expect(types.indexOf('service-check-start')).toBeGreaterThan(lastStep);
    expect(types.at(-1)).toBe('device-result');
    expect(types.filter((t) => t === 'device-result')).toHaveLength(1);
    const last = events.at(-1);
    expect(last?.type === 'device-result' && last.result.service?.kind).toBe('connected');
    expect(serviceEvents(events).at(-1)).toMatchObject({ type: 'service-check-done', device: 'mp1' });
  });

  it('NO CHANGE is checked too: a re-inserted stick tells whether the MP is connected', async () => {
    const device = await start();
    const agent = agentWith();
    const { file } = await applyTo(device, agent);
    service.clearRequests();
    const again = await applyFile(file, { agent, serviceBackoff: FAST });
    expect(again.result.outcome).toBe('no-change');
    expect(again.result.devices[0]?.service).toMatchObject({ kind: 'connected', polls: 1 });
    expect(service.requests()).toHaveLength(1);
  });

  it('uses service_hostname when the stick gives it', async () => {
    const device = await start();
    service.registerAppliance({ hostname: 'branch-12-mp1.example', orgId: 40 });
    const file = stickWithConfig(
      stickHead(device, ETH1('192.0.2.10')).replace(
        '  - name: mp1\n',
        '  - name: mp1\n    service_hostname: branch-12-mp1.example\n',
      ),
    );
    const { result } = await applyTo(device, agentWith(), undefined, file);
    expect(result.devices[0]?.service).toMatchObject({ kind: 'connected', hostname: 'branch-12-mp1.example' });
    expect(service.requests().every((r) => r.query.hostname === 'branch-12-mp1.example')).toBe(true);
  });

  it('a dry run asks the service nothing', async () => {
    const device = await start();
    const { result } = await applyFile(stickWithConfig(stickHead(device, ETH1('192.0.2.10'))), {
      agent: agentWith(),
      dryRun: true,
    });
    expect(result.devices[0]?.service).toBeUndefined();
    expect(service.requests()).toHaveLength(0);
  });
});

describe('not confirmed: reported, never a device failure', () => {
  const expectConfigured = (result: Awaited<ReturnType<typeof applyTo>>['result']) => {
    expect(result.outcome).toBe('changed');
    expect(result.devices[0]?.outcome).toBe('changed');
    expect(result.devices[0]?.rollback).toBeUndefined();
  };

  it('unknown to the service', async () => {
    const device = await start();
    service.unregisterAppliance('mp1');
    const { result } = await applyTo(device, agentWith({ waitConnectedS: 1 }));
    expectConfigured(result);
    expect(result.devices[0]?.service).toMatchObject({ kind: 'unknown', connected: false });
    expect(result.devices[0]?.service?.sentence).toMatch(
      /^unknown to the service: it lists no Monitoring Point with hostname "mp1"/,
    );
  });

  it('still UNAVAILABLE after N s (the MP does not reconnect within the wait)', async () => {
    const device = await start();
    service.reconnectMs = 60_000;
    try {
      const started = Date.now();
      const { result } = await applyTo(device, agentWith({ waitConnectedS: 1.5 }));
      expectConfigured(result);
      expect(result.devices[0]?.service).toMatchObject({ kind: 'unavailable', lastStatus: 'UNAVAILABLE' });
      expect(result.devices[0]?.service?.sentence).toMatch(/^still UNAVAILABLE after 2 s/);
      // The wait is the configured one, not more: the device's own work plus 1.5 s.
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      service.reconnectMs = 400;
    }
  });

  it('BLOCKED and REMOVED', async () => {
    const device = await start();
    service.setConnectionStatus('mp1', 'BLOCKED');
    const blocked = await applyTo(device, agentWith({ waitConnectedS: 1 }));
    expectConfigured(blocked.result);
    expect(blocked.result.devices[0]?.service).toMatchObject({
      kind: 'blocked',
      sentence: 'BLOCKED in the service: an administrator of the service must unblock it',
    });

    service.setConnectionStatus('mp1', 'REMOVED');
    const removed = await applyTo(device, agentWith({ waitConnectedS: 1 }), ETH1('192.0.2.11'));
    expectConfigured(removed.result);
    expect(removed.result.devices[0]?.service).toMatchObject({ kind: 'removed' });
  });

  it('bad token and no permission stop at the first answer', async () => {
    const device = await start();
    const bad = await applyTo(device, agentWith({ token: new Secret('tok-Wrong-3310-never-shown') }));
    expectConfigured(bad.result);
    expect(bad.result.devices[0]?.service).toMatchObject({ kind: 'bad-token', polls: 1 });

    const denied = await applyTo(device, agentWith({ token: new Secret(OTHER_TOKEN) }), ETH1('192.0.2.11'));
    expectConfigured(denied.result);
    expect(denied.result.devices[0]?.service).toMatchObject({ kind: 'no-permission', polls: 1 });
    expectNoSecret([JSON.stringify(bad), JSON.stringify(denied)], [TOKEN, OTHER_TOKEN, 'tok-Wrong-3310-never-shown']);
  });

  it('service unreachable', async () => {
    const device = await start();
    const url = `https://127.0.0.1:${await closedPort()}/api`;
    const { result } = await applyTo(device, agentWith({ url, waitConnectedS: 1 }));
    expectConfigured(result);
    expect(result.devices[0]?.service).toMatchObject({ kind: 'unreachable', errorCode: 'MPPROV_SERVICE_UNREACHABLE' });
    expect(result.devices[0]?.service?.sentence).toBe(`service unreachable: cannot reach ${url}: connection refused`);
  });

  it('an MP whose management port fails 802.1X stays UNAVAILABLE', async () => {
    const device = await start();
    // The device answers again, then its port refuses 802.1X: the service never hears from it.
    const hostname = 'mp1';
    const { result } = await applyTo(device, agentWith({ waitConnectedS: 1.5 }), ETH1('192.0.2.10'));
    expect(result.devices[0]?.service?.kind).toBe('connected');
    service.restartStarted(hostname);
    service.answeringAgain(hostname);
    service.managementDot1xFailed(hostname);
    const again = await applyTo(device, agentWith({ waitConnectedS: 1.5 }), ETH1('192.0.2.10'));
    expect(again.result.outcome).toBe('no-change');
    expect(again.result.devices[0]?.service?.kind).toBe('unavailable');
  });
});

describe('the token stays secret', () => {
  it('appears in no event, result or state file, in clear or in base64', async () => {
    const device = await start();
    const agent = agentWith();
    const { result, events } = await applyTo(device, agent);
    expect(result.devices[0]?.service?.kind).toBe('connected');
    const stateFiles = listFiles(agent.stateDir).map((f) => readFileSync(f, 'utf8'));
    expectNoSecret([JSON.stringify(events), JSON.stringify(result), ...stateFiles], [TOKEN]);
  });
});

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}
