import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../src/simulator/index.js';
import { startSimulatedService, type SimulatedServiceSetup } from '../../src/simulator/service/index.js';
import { usePki } from '../support/test-pki.js';
import { startEventReceiver, type EventReceiver } from './event-receiver.js';
import { rawCaller } from './service-rig.js';
import { apiClient } from './sim-client.js';

/**
 * Event delivery of the simulated service to real receivers on loopback: both kinds around a real
 * simulated device's restart, over HTTPS trusted through --service-events-ca's CA, with every
 * documented field.
 */

const pki = usePki();
const ca = pki.ca('events-ca', 'mpprov test events CA');
const receiverTls = pki.issue('receiver', '127.0.0.1', ca, 'server', { san: 'IP:127.0.0.1' });
const otherCa = pki.ca('other-ca', 'some other CA');
const strangerTls = pki.issue('stranger', '127.0.0.1', otherCa, 'server', { san: 'IP:127.0.0.1' });
const tlsOf = (issued: { cert: string; key: string }) => ({
  cert: readFileSync(issued.cert, 'utf8'),
  key: readFileSync(issued.key, 'utf8'),
});

let setup: SimulatedServiceSetup;
let fleet: Fleet;
const receivers: EventReceiver[] = [];
beforeAll(async () => {
  setup = await startSimulatedService({
    devices: 3,
    hostname: 'ev-mp',
    reconnectMs: 150,
    eventsCaPem: readFileSync(ca.cert, 'utf8'),
  });
  fleet = await startFleet(3, {
    password: 'ev-Pw-8812-admin',
    restartMs: 200,
    rebootMs: 250,
    serviceRateLimit: false,
    hooks: setup.hooks,
  });
});
afterAll(async () => {
  await fleet?.close();
  await setup?.service.close();
});
afterEach(async () => {
  const caller = rawCaller(setup.service, setup.service.token);
  await caller.call('DELETE', '/api/v3/observer');
  await caller.close();
  await setup.service.eventsSettled();
  setup.service.clearDeliveryFaults();
  setup.service.clearDeliveries();
  for (const receiver of receivers.splice(0)) await receiver.close();
});

async function receiver(options: Parameters<typeof startEventReceiver>[0] = { tls: tlsOf(receiverTls) }) {
  const started = await startEventReceiver(options);
  receivers.push(started);
  return started;
}

async function observe(url: string, flags: Record<string, boolean>) {
  const caller = rawCaller(setup.service, setup.service.token);
  try {
    const answer = await caller.call('POST', '/api/v3/observer', { body: { url, ...flags } });
    expect(answer.status).toBe(200);
    return answer.json;
  } finally {
    await caller.close();
  }
}

async function restart(index: number) {
  const device = fleet.devices[index];
  if (device === undefined) throw new Error(`no device ${index}`);
  expect((await apiClient(device).put('/service/networking/?action=restart', {})).status).toBe(202);
}

describe('delivery around a restart', () => {
  it('SEQUENCER_EVENT UNAVAILABLE/AVAILABLE and SQA_EVENT CONNECTIVITY 0.0/1.0 for the dual-ended path to it', async () => {
    const caller = rawCaller(setup.service, setup.service.token);
    const twoWay = await caller.call('POST', '/api/v3/path', {
      body: { sourceAppliance: 'ev-mp-1', target: 'ev-mp-2', orgId: 12 },
    });
    // A single-ended path to elsewhere and a dual-ended one from the restarting MP: no SQA_EVENT for either.
    await caller.call('POST', '/api/v3/path', {
      body: { sourceAppliance: 'ev-mp-1', target: '192.0.2.80', orgId: 12 },
    });
    await caller.call('POST', '/api/v3/path', { body: { sourceAppliance: 'ev-mp-2', target: 'ev-mp-3', orgId: 12 } });
    await caller.close();
    expect(twoWay).toMatchObject({ status: 201, json: { instrumentation: 'TWO_WAY' } });
    const path = twoWay.json as { id: number; pathName: string };

    const events = await receiver();
    await observe(events.url, { seqEvents: true, sqaEvents: true });
    const before = Math.floor(Date.now() / 1000);
    await restart(1);
    await events.waitFor(4);
    await setup.service.eventsSettled();
    const after = Math.floor(Date.now() / 1000);

    expect(events.received.map((r) => [r.method, r.path, r.contentType])).toEqual(
      Array.from({ length: 4 }, () => ['POST', '/events/k7Qm2xV9', 'application/json']),
    );
    const common = { sequencerName: 'ev-mp-2', sequencerHost: 'ev-mp-2', orgId: 12, orgName: 'Branch Networks' };
    const sqa = (value: number) => ({
      type: 'SQA_EVENT',
      description: `Connectivity to ev-mp-2 ${value === 0 ? 'lost' : 'regained'} on path ${path.pathName}`,
      eventTime: expect.any(Number) as number,
      // The documented rule: the SQA_EVENT's sequencer is the path's source MP.
      sequencerName: 'ev-mp-1',
      sequencerHost: 'ev-mp-1',
      orgId: 12,
      orgName: 'Branch Networks',
      target: 'ev-mp-2',
      pathId: path.id,
      pathName: path.pathName,
      pathServiceQuality: value === 0 ? 'SQA_VIOLATED' : 'SQA_NOT_VIOLATED',
      measuredParam: 'CONNECTIVITY',
      measuredValue: value,
      deepLink: `${new URL(setup.service.url).origin}/pvc/pathdetail.html?pathId=${path.id}`,
      importance: 5,
      tags: [],
    });
    expect(events.events()).toEqual([
      {
        type: 'SEQUENCER_EVENT',
        description: 'Monitoring Point ev-mp-2 is UNAVAILABLE',
        eventTime: expect.any(Number) as number,
        ...common,
        sequencerStatus: 'UNAVAILABLE',
      },
      sqa(0),
      {
        type: 'SEQUENCER_EVENT',
        description: 'Monitoring Point ev-mp-2 is AVAILABLE',
        eventTime: expect.any(Number) as number,
        ...common,
        sequencerStatus: 'AVAILABLE',
      },
      sqa(1),
    ]);
    for (const event of events.events()) {
      expect(Number.isInteger(event['eventTime'])).toBe(true);
      expect(event['eventTime']).toBeGreaterThanOrEqual(before);
      expect(event['eventTime']).toBeLessThanOrEqual(after);
    }
    // The MP is AVAILABLE in the data API by the time its AVAILABLE event arrives.
    expect(setup.service.connectionStatus('ev-mp-2')).toBe('AVAILABLE');
    expect(setup.service.deliveryCounts()).toEqual({ answered: 4 });
    expect(
      setup.service.deliveries().map((d) => `${d.type} ${d.sequencerStatus ?? d.measuredValue} ${d.outcome}`),
    ).toEqual([
      'SEQUENCER_EVENT UNAVAILABLE answered',
      'SQA_EVENT 0 answered',
      'SEQUENCER_EVENT AVAILABLE answered',
      'SQA_EVENT 1 answered',
    ]);
    // The token never travels with an event.
    for (const request of events.received) expect(request.text).not.toContain(setup.service.token);
  });

  it('sends each configuration only its kinds, and only events of organizations its owner sees', async () => {
    const seqOnly = await receiver();
    const sqaOnly = await receiver({});
    await observe(seqOnly.url, { seqEvents: true });
    await observe(sqaOnly.url, { sqaEvents: true });
    const branchToken = setup.service.addToken({ label: 'org-13-only', orgIds: [13] });
    const branch = await receiver();
    const caller = rawCaller(setup.service, branchToken);
    expect((await caller.call('POST', '/api/v3/observer', { body: { url: branch.url, seqEvents: true } })).status).toBe(
      200,
    );
    await caller.close();

    setup.service.managementDot1xFailed('ev-mp-3');
    setup.service.setConnectionStatus('ev-mp-3', 'AVAILABLE');
    await setup.service.eventsSettled();
    expect(seqOnly.events().map((e) => e['sequencerStatus'])).toEqual(['UNAVAILABLE', 'AVAILABLE']);
    // The dual-ended path ev-mp-2 -> ev-mp-3 (made above) over plain HTTP, as to an HTTPS receiver.
    expect(sqaOnly.events().map((e) => `${String(e['pathName'])} ${String(e['measuredValue'])}`)).toEqual([
      'ev-mp-2 -> ev-mp-3 0',
      'ev-mp-2 -> ev-mp-3 1',
    ]);
    expect(sqaOnly.url).toMatch(/^http:\/\//);
    expect(branch.received).toEqual([]);
    expect(setup.service.deliveries().every((d) => d.caller === 'simulate')).toBe(true);
  });

  it('NEW for a new MP, then its status; nothing when an MP disappears', async () => {
    const events = await receiver();
    await observe(events.url, { seqEvents: true });
    setup.service.registerAppliance({ hostname: 'ev-new-mp', orgId: 12 });
    setup.service.unregisterAppliance('ev-new-mp');
    await setup.service.eventsSettled();
    expect(events.events().map((e) => `${String(e['sequencerName'])} ${String(e['sequencerStatus'])}`)).toEqual([
      'ev-new-mp NEW',
      'ev-new-mp AVAILABLE',
    ]);
  });

  it('a receiver whose certificate no trusted CA issued gets nothing: each delivery fails', async () => {
    const stranger = await receiver({ tls: tlsOf(strangerTls) });
    await observe(stranger.url, { seqEvents: true });
    setup.service.setConnectionStatus('ev-mp-3', 'BLOCKED');
    setup.service.setConnectionStatus('ev-mp-3', 'AVAILABLE');
    await setup.service.eventsSettled();
    expect(stranger.received).toEqual([]);
    const deliveries = setup.service.deliveries();
    expect(deliveries).toHaveLength(2);
    for (const delivery of deliveries)
      expect(delivery).toMatchObject({ outcome: 'failed', detail: expect.stringMatching(/^[A-Z_]+$/) as string });
  });

  it('a reboot is an outage like a restart: both kinds, in order', async () => {
    const caller = rawCaller(setup.service, setup.service.token);
    const created = await caller.call('POST', '/api/v3/path', {
      body: { sourceAppliance: 'ev-mp-1', target: 'ev-mp-3', orgId: 12 },
    });
    await caller.close();
    expect(created).toMatchObject({ status: 201, json: { instrumentation: 'TWO_WAY' } });
    const events = await receiver();
    await observe(events.url, { seqEvents: true, sqaEvents: true });
    const device = fleet.devices[2];
    if (device === undefined) throw new Error('no device 2');
    expect((await apiClient(device).put('/appliance/?action=reboot', {})).status).toBe(202);
    await events.waitFor(6);
    await setup.service.eventsSettled();
    expect(device.state().reboots).toBe(1);
    // Both dual-ended paths to ev-mp-3 (the one made in the first test, then this one), in creation order.
    const shown = (e: Record<string, unknown>) =>
      e['type'] === 'SEQUENCER_EVENT'
        ? `${String(e['sequencerName'])} ${String(e['sequencerStatus'])}`
        : `${String(e['pathName'])} ${String(e['measuredValue'])}`;
    expect(events.events().map(shown)).toEqual([
      'ev-mp-3 UNAVAILABLE',
      'ev-mp-2 -> ev-mp-3 0',
      'ev-mp-1 -> ev-mp-3 0',
      'ev-mp-3 AVAILABLE',
      'ev-mp-2 -> ev-mp-3 1',
      'ev-mp-1 -> ev-mp-3 1',
    ]);
  });
});
