/**
 * `mpprov observe` (docs/observe.md): the receiver of the service's events, its registration with
 * /v3/observer, and the events log other commands on the host read.
 */
export { runObserve, type ObserveOptions } from './run-observe.js';
export { readEvents, EVENTS_FILE, type LoggedEvent } from './events-log.js';
export { readObserveStatus, type ObserveStatus } from './observe-status.js';
export type { ServiceEvent } from './service-event.js';
export { followAvailableEvents } from './event-follower.js';
export { watchWithEvents, type WatchWithEvents } from './watch-with-events.js';
