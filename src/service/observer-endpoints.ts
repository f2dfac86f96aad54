import { z } from 'zod';
import type { CallOptions } from './appliance-endpoints.js';
import { request, requestWithoutBody, type ServiceConnection } from './service-request.js';

/**
 * `/v3/observer` (docs/service-model.md, "Observers and events"): where the service posts events
 * for the caller. DELETE removes every configuration of the caller, so callers read all first.
 */

export const OBSERVER_KINDS = [
  'testEvents',
  'seqEvents',
  'sqaEvents',
  'webAlertEvents',
  'networkChangeEvents',
] as const;
export type ObserverKind = (typeof OBSERVER_KINDS)[number];

/** Loose: a field the service adds later is kept, so a configuration posted back loses nothing it can carry. */
export const Observer = z.looseObject({
  url: z.string(),
  testEvents: z.boolean().optional(),
  seqEvents: z.boolean().optional(),
  sqaEvents: z.boolean().optional(),
  webAlertEvents: z.boolean().optional(),
  networkChangeEvents: z.boolean().optional(),
  blacklisted: z.boolean().optional(),
});
export type Observer = z.infer<typeof Observer>;
const ObserverList = z.array(Observer);

/** What POST takes: the URL and the kind flags (`blacklisted` is the service's to set). */
export type NewObserver = { url: string } & Partial<Record<ObserverKind, boolean>>;

export function listObservers(connection: ServiceConnection, options: CallOptions = {}): Promise<Observer[]> {
  return request(connection, { path: '/v3/observer', ...options }, ObserverList);
}

export function postObserver(
  connection: ServiceConnection,
  observer: NewObserver,
  options: CallOptions = {},
): Promise<Observer> {
  return request(connection, { method: 'POST', path: '/v3/observer', body: observer, ...options }, Observer);
}

/** The model says only "200": its body (JSON, text or none) is not read, so no shape of it can fail a rebuild midway. */
export function deleteObservers(connection: ServiceConnection, options: CallOptions = {}): Promise<void> {
  return requestWithoutBody(connection, { method: 'DELETE', path: '/v3/observer', ...options });
}
