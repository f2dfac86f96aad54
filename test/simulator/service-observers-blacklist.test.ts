import { afterEach, describe, expect, it } from 'vitest';
import { parseDeliveryFault } from '../../src/simulator/service/delivery-faults.js';
import { QUEUE_LIMIT } from '../../src/simulator/service/event-delivery.js';
import { EVENT_ANSWER_MS } from '../../src/simulator/service/event-feed.js';
import type { ServiceSimulatorOptions } from '../../src/simulator/service/index.js';
import { startEventReceiver, type EventReceiver } from './event-receiver.js';
import { startServiceRig, type ServiceRig } from './service-rig.js';

/**
 * What the simulated service does with receivers that do not answer: 10 unanswered events in a
 * row blacklist a configuration (silent from then on, until DELETE and a new POST), the answer
 * deadline, and the delivery faults (drop, delay, duplicate, reorder). Real receivers on loopback.
 */

let rig: ServiceRig | undefined;
const receivers: EventReceiver[] = [];
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
  await rig?.close();
  rig = undefined;
});

async function start(options: ServiceSimulatorOptions = {}): Promise<ServiceRig> {
  rig = await startServiceRig(options);
  rig.service.registerAppliance({ hostname: 'bl-mp1', orgId: 12 });
  return rig;
}

async function receiver(): Promise<EventReceiver> {
  const started = await startEventReceiver();
  receivers.push(started);
  return started;
}

const observe = async (service: ServiceRig, url: string) =>
  (await service.call('POST', '/api/v3/observer', { body: { url, seqEvents: true } })).json as Record<string, unknown>;

/** `count` SEQUENCER_EVENTs: the MP goes BLOCKED and back, alternately. */
async function statusChanges(service: ServiceRig, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const status = service.service.connectionStatus('bl-mp1') === 'AVAILABLE' ? 'BLOCKED' : 'AVAILABLE';
    service.service.setConnectionStatus('bl-mp1', status);
    // One at a time, so the outcome of each is known before the next (the count is of a row).
    await service.service.eventsSettled();
  }
}

const outcomes = (service: ServiceRig) => service.service.deliveries().map((d) => d.outcome);

describe('blacklisting', () => {
  it('10 unanswered events in a row blacklist the configuration; it then gets nothing, though it keeps its kinds', async () => {
    const service = await start();
    const events = await receiver();
    events.answer = 500;
    await observe(service, events.url);
    await statusChanges(service, 9);
    expect((await service.get('/api/v3/observer')).json).toMatchObject([{ blacklisted: false }]);
    await statusChanges(service, 1);
    expect(events.received).toHaveLength(10);
    expect(outcomes(service)).toEqual(Array.from({ length: 10 }, () => 'refused'));
    expect(service.service.deliveries().at(-1)).toMatchObject({ status: 500, blacklisted: true });
    expect((await service.get('/api/v3/observer')).json).toMatchObject([{ url: events.url, blacklisted: true }]);

    events.answer = 200;
    await statusChanges(service, 3);
    expect(events.received).toHaveLength(10);
    expect(service.service.deliveries()).toHaveLength(10);
    // Still holds seqEvents: another server cannot take the kind.
    expect(
      await service.call('POST', '/api/v3/observer', { body: { url: 'https://other.example/ev', seqEvents: true } }),
    ).toMatchObject({ status: 400, json: { messages: ['Bad Request', `seqEvents already goes to ${events.url}`] } });

    // A POST for the same URL replaces the flags and keeps blacklisted.
    const replaced = await service.call('POST', '/api/v3/observer', {
      body: { url: events.url, seqEvents: true, sqaEvents: true },
    });
    expect(replaced.json).toMatchObject({ sqaEvents: true, blacklisted: true });
    await statusChanges(service, 2);
    expect(events.received).toHaveLength(10);

    // Only DELETE and a new POST clear it.
    expect((await service.call('DELETE', '/api/v3/observer')).status).toBe(200);
    expect(await observe(service, events.url)).toMatchObject({ blacklisted: false });
    await statusChanges(service, 1);
    expect(events.received).toHaveLength(11);
    expect(outcomes(service).at(-1)).toBe('answered');
  });

  it('an answer resets the count: only 10 unanswered in a row blacklist', async () => {
    const service = await start();
    const events = await receiver();
    await observe(service, events.url);
    events.answer = 503;
    await statusChanges(service, 9);
    events.answer = 204;
    await statusChanges(service, 1);
    events.answer = 503;
    await statusChanges(service, 9);
    expect((await service.get('/api/v3/observer')).json).toMatchObject([{ blacklisted: false }]);
    expect(outcomes(service)).toEqual([
      ...Array<string>(9).fill('refused'),
      'answered',
      ...Array<string>(9).fill('refused'),
    ]);
  });

  it('a server that is not there counts as unanswered (failed, never retried)', async () => {
    const service = await start();
    const events = await receiver();
    const url = events.url;
    await events.close();
    receivers.length = 0;
    await observe(service, url);
    await statusChanges(service, 10);
    expect(outcomes(service)).toEqual(Array(10).fill('failed'));
    expect(service.service.deliveries()[0]).toMatchObject({ detail: 'ECONNREFUSED' });
    expect((await service.get('/api/v3/observer')).json).toMatchObject([{ blacklisted: true }]);
  });
});

describe('the answer deadline', () => {
  it('is the model’s 10 s unless a test shortens it', () => {
    expect(EVENT_ANSWER_MS).toBe(10_000);
  });

  it('a receiver that does not answer in time is unanswered (timeout), and holds up only its own lane', async () => {
    const service = await start({ eventAnswerMs: 2_000 });
    const silent = await receiver();
    silent.answer = 'hang';
    await observe(service, silent.url);
    const otherToken = service.service.addToken({ label: 'other-user' });
    const prompt = await receiver();
    await service.call('POST', '/api/v3/observer', { body: { url: prompt.url, seqEvents: true }, token: otherToken });

    service.service.setConnectionStatus('bl-mp1', 'BLOCKED');
    service.service.setConnectionStatus('bl-mp1', 'AVAILABLE');
    await prompt.waitFor(2);
    // The silent receiver has the first event and no answer for it yet; the service still answers.
    expect(silent.received).toHaveLength(1);
    expect((await service.get('/api/v3/organization')).status).toBe(200);
    await service.service.eventsSettled();
    expect(silent.received).toHaveLength(2);
    const silentOutcomes = service.service.deliveries().filter((d) => d.url === silent.url);
    expect(silentOutcomes.map((d) => d.outcome)).toEqual(['timeout', 'timeout']);
    for (const d of silentOutcomes) expect(d.durationMs).toBeGreaterThanOrEqual(2_000);
  });

  it('with the default, a silent receiver is cut off after 10 s', async () => {
    const service = await start();
    const silent = await receiver();
    silent.answer = 'hang';
    await observe(service, silent.url);
    service.service.setConnectionStatus('bl-mp1', 'BLOCKED');
    await service.service.eventsSettled();
    expect(service.service.deliveries()).toMatchObject([{ outcome: 'timeout' }]);
    expect(service.service.deliveries()[0]?.durationMs).toBeGreaterThanOrEqual(10_000);
  }, 20_000);
});

describe('the queue per configuration', () => {
  it('holds at most 256 events behind the one in flight; more are logged queue-full and never sent', async () => {
    const service = await start({ eventAnswerMs: 60_000 });
    const silent = await receiver();
    silent.answer = 'hang';
    await observe(service, silent.url);
    for (let i = 0; i < 300; i++) {
      service.service.setConnectionStatus('bl-mp1', i % 2 === 0 ? 'BLOCKED' : 'AVAILABLE');
    }
    // One in flight, QUEUE_LIMIT waiting, the rest refused at once.
    expect(service.service.deliveryCounts()).toEqual({ 'queue-full': 300 - 1 - QUEUE_LIMIT });
    expect(QUEUE_LIMIT).toBe(256);
    await silent.waitFor(1);
    // The data API answers meanwhile.
    expect((await service.get('/api/v3/observer')).json).toMatchObject([{ blacklisted: false }]);
  });
});

describe('delivery faults', () => {
  const statuses = (events: EventReceiver) => events.events().map((e) => String(e['sequencerStatus']));

  it('drop: the event is not sent, and does not count towards blacklisting', async () => {
    const service = await start();
    const events = await receiver();
    await observe(service, events.url);
    service.service.setDeliveryFaults(['drop,times=2']);
    await statusChanges(service, 3);
    expect(statuses(events)).toEqual(['BLOCKED']);
    expect(outcomes(service)).toEqual(['dropped', 'dropped', 'answered']);
    expect(service.service.deliveries()[0]).toMatchObject({ fault: 'drop', sequencerStatus: 'BLOCKED' });
    expect(service.service.deliveryFaults()).toEqual([]);
  });

  it('duplicate: the same event twice, each attempt counted', async () => {
    const service = await start();
    const events = await receiver();
    await observe(service, events.url);
    service.service.setDeliveryFaults(['duplicate,times=1']);
    await statusChanges(service, 2);
    expect(statuses(events)).toEqual(['BLOCKED', 'BLOCKED', 'AVAILABLE']);
    expect(events.received[0]?.text).toBe(events.received[1]?.text);
    expect(service.service.deliveryCounts()).toEqual({ answered: 3 });
  });

  it('reorder: an event is held and sent after the next one', async () => {
    const service = await start();
    const events = await receiver();
    await observe(service, events.url);
    service.service.setDeliveryFaults(['reorder,times=1']);
    service.service.setConnectionStatus('bl-mp1', 'BLOCKED');
    service.service.setConnectionStatus('bl-mp1', 'AVAILABLE');
    await service.service.eventsSettled();
    expect(statuses(events)).toEqual(['AVAILABLE', 'BLOCKED']);
    expect(service.service.deliveries().map((d) => `${d.sequencerStatus ?? ''} ${d.fault ?? ''}`)).toEqual([
      'AVAILABLE ',
      'BLOCKED reorder',
    ]);
  });

  it('reorder with no next event: the held one still goes', async () => {
    const service = await start();
    const events = await receiver();
    await observe(service, events.url);
    service.service.setDeliveryFaults(['reorder,times=1']);
    service.service.setConnectionStatus('bl-mp1', 'BLOCKED');
    await service.service.eventsSettled();
    expect(statuses(events)).toEqual(['BLOCKED']);
  });

  it('delay: the event waits before it is sent, and later events wait behind it', async () => {
    const service = await start();
    const events = await receiver();
    await observe(service, events.url);
    service.service.setDeliveryFaults(['delay=400,times=1']);
    const before = Date.now();
    service.service.setConnectionStatus('bl-mp1', 'BLOCKED');
    service.service.setConnectionStatus('bl-mp1', 'AVAILABLE');
    await service.service.eventsSettled();
    expect(statuses(events)).toEqual(['BLOCKED', 'AVAILABLE']);
    for (const request of events.received) expect(request.atMs - before).toBeGreaterThanOrEqual(400);
    expect(service.service.deliveries().map((d) => d.fault)).toEqual(['delay 400 ms', undefined]);
  });

  it('a fault that does not parse says the accepted forms', () => {
    expect(() => parseDeliveryFault('lose')).toThrow(
      '"lose" is not an event delivery fault: write drop, duplicate, reorder or delay=MS (MS up to 600000), each optionally followed by ,times=N (N from 1).',
    );
    expect(() => parseDeliveryFault('drop,times=0')).toThrow(/is not an event delivery fault/);
    expect(parseDeliveryFault('delay=250,times=3')).toEqual({ kind: 'delay', ms: 250, times: 3 });
    expect(parseDeliveryFault('duplicate')).toEqual({ kind: 'duplicate' });
  });
});
