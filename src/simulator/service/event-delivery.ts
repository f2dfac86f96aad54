import { setTimeout as sleep } from 'node:timers/promises';
import type { DeliveryFaults } from './delivery-faults.js';
import type { DeliveryLog, DeliveryLogEntry, DeliveryOutcome } from './delivery-log.js';
import { sendEvent, type SendOutcome } from './event-sender.js';
import type { ObserverRecord, ObserverRegistry } from './observer-registry.js';
import { EVENT_FLAG, type ServiceEvent } from './service-events.js';

/**
 * Delivers events to the configured servers, asynchronously and bounded: one lane per
 * configuration, sending one event at a time in order (a slow or silent receiver holds up only
 * its own lane, never the service or another receiver), its queue capped. Each event is sent once;
 * its outcome counts towards blacklisting (observer-registry.ts). A configuration removed or
 * blacklisted while events wait gets none of them.
 */

export interface EventDeliveryOptions {
  observers: ObserverRegistry;
  faults: DeliveryFaults;
  log: DeliveryLog;
  /** Per answer; the model's 10 s unless a test shortens it. */
  answerMs: number;
  /** CAs for HTTPS receivers; undefined: Node's default store. */
  ca: string[] | undefined;
}

/** Events waiting per configuration; more are logged `queue-full` and not sent. */
export const QUEUE_LIMIT = 256;
/** A `reorder`ed event waits at most this long for a next event to overtake it, then goes anyway. */
const REORDER_HOLD_MS = 2_000;

interface Pending {
  event: ServiceEvent;
  body: string;
  delayMs: number;
  faults: string[];
}

interface Lane {
  /** The configuration's id (observer-registry.ts). */
  id: number;
  /** Whose configuration and where it sends: kept for the log after the configuration is gone. */
  to: { caller: string; url: string };
  queue: Pending[];
  running: boolean;
  held?: { item: Pending; timer: NodeJS.Timeout };
}

export class EventDelivery {
  readonly #lanes = new Map<number, Lane>();
  readonly #abort = new AbortController();
  #idleWaiters: (() => void)[] = [];

  constructor(private readonly options: EventDeliveryOptions) {}

  /** Queues the event for every configuration that wants its kind and may see its organization. */
  publish(event: ServiceEvent): void {
    if (this.#abort.signal.aborted) return;
    for (const record of this.options.observers.recipients(EVENT_FLAG[event.type], event.orgId)) {
      this.#offer(record, event);
    }
  }

  /** Resolves once nothing is queued, held or in flight (what has been published so far is delivered). */
  settled(): Promise<void> {
    if (this.#lanes.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  close(): void {
    this.#abort.abort();
    for (const lane of this.#lanes.values()) if (lane.held !== undefined) clearTimeout(lane.held.timer);
    this.#lanes.clear();
    this.#wakeIdle();
  }

  #offer(record: ObserverRecord, event: ServiceEvent): void {
    const effects = this.options.faults.take();
    const item: Pending = { event, body: JSON.stringify(event), delayMs: effects.delayMs, faults: effects.names };
    if (effects.drop) {
      this.#log({ caller: record.ownerLabel, url: record.config.url }, item, 'dropped', {});
      return;
    }
    const lane = this.#lanes.get(record.id) ?? {
      id: record.id,
      to: { caller: record.ownerLabel, url: record.config.url },
      queue: [],
      running: false,
    };
    this.#lanes.set(record.id, lane);
    if (effects.reorder && lane.held === undefined) {
      const timer = setTimeout(() => this.#release(lane), REORDER_HOLD_MS);
      timer.unref();
      lane.held = { item, timer };
      return;
    }
    this.#enqueue(lane, item);
    if (effects.duplicate) this.#enqueue(lane, item);
    this.#release(lane);
  }

  /** The held (reordered) event goes now, behind whatever overtook it. */
  #release(lane: Lane): void {
    const held = lane.held;
    if (held === undefined) return;
    clearTimeout(held.timer);
    delete lane.held;
    this.#enqueue(lane, held.item);
  }

  #enqueue(lane: Lane, item: Pending): void {
    if (lane.queue.length >= QUEUE_LIMIT) {
      this.#log(lane.to, item, 'queue-full', {});
      this.#idleIfDone(lane);
      return;
    }
    lane.queue.push(item);
    if (!lane.running) void this.#run(lane);
  }

  async #run(lane: Lane): Promise<void> {
    const id = lane.id;
    lane.running = true;
    const signal = this.#abort.signal;
    for (let item = lane.queue.shift(); item !== undefined && !signal.aborted; item = lane.queue.shift()) {
      if (item.delayMs > 0) await sleep(item.delayMs, undefined, { signal }).catch(() => undefined);
      const record = this.options.observers.byId(id);
      if (record === undefined || record.config.blacklisted) {
        this.#discard(lane, item, record === undefined ? 'configuration removed' : 'blacklisted');
        break;
      }
      const started = Date.now();
      const sent = await sendEvent(record.config.url, item.body, {
        answerMs: this.options.answerMs,
        ca: this.options.ca,
        signal,
        // A request Node refuses to even start (a URL it cannot take) is a failure like any other.
      }).catch((error: unknown): SendOutcome => ({ outcome: 'failed', detail: String(error).slice(0, 80) }));
      if (signal.aborted) break;
      const blacklisted = this.options.observers.recordOutcome(id, sent.outcome === 'answered');
      this.#log(lane.to, item, sent.outcome, {
        ...('status' in sent ? { status: sent.status } : {}),
        ...('detail' in sent ? { detail: sent.detail } : {}),
        durationMs: Date.now() - started,
        ...(blacklisted ? { blacklisted: true } : {}),
      });
    }
    lane.running = false;
    this.#idleIfDone(lane);
  }

  /** The events still waiting for a configuration that is gone or blacklisted: logged as never sent. */
  #discard(lane: Lane, first: Pending, why: string): void {
    const items = [first, ...lane.queue, ...(lane.held === undefined ? [] : [lane.held.item])];
    if (lane.held !== undefined) clearTimeout(lane.held.timer);
    delete lane.held;
    lane.queue.length = 0;
    for (const item of items) this.#log(lane.to, item, 'discarded', { detail: why });
  }

  #idleIfDone(lane: Lane): void {
    if (lane.running || lane.queue.length > 0 || lane.held !== undefined) return;
    if (this.#lanes.get(lane.id) === lane) this.#lanes.delete(lane.id);
    if (this.#lanes.size === 0) this.#wakeIdle();
  }

  #wakeIdle(): void {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const wake of waiters) wake();
  }

  #log(
    to: Lane['to'],
    item: Pending,
    outcome: DeliveryOutcome,
    extra: Pick<DeliveryLogEntry, 'status' | 'detail' | 'durationMs' | 'blacklisted'>,
  ): void {
    const { event } = item;
    this.options.log.add({
      atMs: Date.now(),
      caller: to.caller,
      url: to.url,
      type: event.type,
      sequencerName: event.sequencerName,
      ...(event.type === 'SEQUENCER_EVENT'
        ? { sequencerStatus: event.sequencerStatus }
        : { pathId: event.pathId, measuredValue: event.measuredValue }),
      eventTime: event.eventTime,
      outcome,
      ...extra,
      ...(item.faults.length === 0 ? {} : { fault: item.faults.join(', ') }),
    });
  }
}
