import type { ApplianceRegistry } from './appliance-registry.js';
import { DeliveryFaults } from './delivery-faults.js';
import { DeliveryLog } from './delivery-log.js';
import { EventDelivery } from './event-delivery.js';
import { eventReceiverCas } from './event-sender.js';
import type { ObserverRegistry } from './observer-registry.js';
import type { PathRegistry } from './path-registry.js';
import type { ServiceCallers } from './service-callers.js';
import { StatusEvents } from './status-events.js';

/**
 * Area B of the simulated service put together: MP status changes become events (status-events.ts),
 * events go to the configured servers (event-delivery.ts), with their faults and their log.
 */

export interface EventFeedOptions {
  registry: ApplianceRegistry;
  paths: PathRegistry;
  observers: ObserverRegistry;
  callers: ServiceCallers;
  /** The service's origin, for SQA_EVENT deepLinks. */
  origin: string;
  /** Per answer; default the model's 10 s. */
  answerMs?: number | undefined;
  /** A CA to trust for HTTPS receivers beside Node's default store. */
  caPem?: string | undefined;
}

export interface EventFeed {
  status: StatusEvents;
  delivery: EventDelivery;
  faults: DeliveryFaults;
  log: DeliveryLog;
  close(): void;
}

/** The model's 10 s per answer. */
export const EVENT_ANSWER_MS = 10_000;

export function createEventFeed(options: EventFeedOptions): EventFeed {
  const faults = new DeliveryFaults();
  const log = new DeliveryLog();
  const delivery = new EventDelivery({
    observers: options.observers,
    faults,
    log,
    answerMs: options.answerMs ?? EVENT_ANSWER_MS,
    ca: eventReceiverCas(options.caPem),
  });
  const status = new StatusEvents({
    registry: options.registry,
    paths: options.paths,
    orgName: (orgId) => options.callers.organizations.find((o) => o.id === orgId)?.name ?? '',
    deepLinkBase: options.origin,
    emit: (event) => delivery.publish(event),
  });
  return {
    status,
    delivery,
    faults,
    log,
    close: () => {
      status.close();
      delivery.close();
    },
  };
}
