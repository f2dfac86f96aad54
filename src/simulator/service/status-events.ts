import type { ApplianceRegistry } from './appliance-registry.js';
import type { PathRegistry } from './path-registry.js';
import { connectivityEvent, sequencerEvent, type ServiceEvent } from './service-events.js';
import type { ApplianceJson, SimConnectionStatus } from './service-wire.js';

/**
 * Turns changes of the MPs' connectionStatus into events: a SEQUENCER_EVENT on every change (NEW
 * for a new MP, then its first status if that differs; none when an MP disappears), and for each
 * dual-ended (TWO_WAY) path whose target is that MP, SQA_EVENT CONNECTIVITY 0.0 when it stops
 * being AVAILABLE and 1.0 when it is AVAILABLE again. The registry computes statuses from event
 * times without timers, so the one change no call announces, the end of a reconnect delay, gets
 * a timer here (unref'd: it never keeps a process alive).
 */

export interface StatusEventsContext {
  registry: ApplianceRegistry;
  paths: PathRegistry;
  orgName: (orgId: number) => string;
  /** Where an SQA_EVENT's deepLink points: the service's origin. */
  deepLinkBase: string;
  emit: (event: ServiceEvent) => void;
  now?: () => number;
}

export class StatusEvents {
  /** The last status announced per MP id. */
  readonly #announced = new Map<number, SimConnectionStatus>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #now: () => number;

  constructor(private readonly context: StatusEventsContext) {
    this.#now = context.now ?? Date.now;
  }

  /** A new MP (or a hostname registered again): NEW, then its status. */
  registered(hostname: string): void {
    const appliance = this.#appliance(hostname);
    if (appliance === undefined) return;
    this.#announced.set(appliance.id, 'NEW');
    this.context.emit(sequencerEvent(appliance, 'NEW', this.context.orgName(appliance.orgId), this.#now()));
    this.changed(hostname);
  }

  /** After anything that may have changed the MP's status: announces a change, if there is one. */
  changed(hostname: string): void {
    const appliance = this.#appliance(hostname);
    if (appliance === undefined) return;
    const before = this.#announced.get(appliance.id);
    const now = appliance.connectionStatus;
    this.#schedule(hostname);
    if (before === now) return;
    this.#announced.set(appliance.id, now);
    const at = this.#now();
    const { registry, paths, orgName, deepLinkBase, emit } = this.context;
    emit(sequencerEvent(appliance, now, orgName(appliance.orgId), at));
    const lost = before === 'AVAILABLE' && now !== 'AVAILABLE';
    const regained = before !== undefined && before !== 'AVAILABLE' && before !== 'NEW' && now === 'AVAILABLE';
    if (!lost && !regained) return;
    for (const path of paths.list()) {
      if (path.instrumentation !== 'TWO_WAY' || registry.byTarget(path.target)?.id !== appliance.id) continue;
      const source = registry.byId(path.sourceId);
      if (source === undefined) continue;
      emit(connectivityEvent(path, source, orgName(path.orgId), lost ? 0 : 1, at, deepLinkBase));
    }
  }

  /** The MP is gone: no event (the model sends none), and its timer stops. */
  removed(id: number, hostname: string): void {
    this.#announced.delete(id);
    this.#clearTimer(hostname);
  }

  /** The reconnect delay changed: every pending end is due at another time. */
  rescheduleAll(): void {
    for (const hostname of [...this.#timers.keys()]) this.changed(hostname);
  }

  close(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }

  #schedule(hostname: string): void {
    this.#clearTimer(hostname);
    const at = this.context.registry.nextChangeAt(hostname);
    if (at === undefined) return;
    // One ms past the end, so a timer that fires a little early still finds the change (else it waits again).
    const timer = setTimeout(
      () => {
        this.#timers.delete(hostname);
        this.changed(hostname);
      },
      at - this.#now() + 1,
    );
    timer.unref();
    this.#timers.set(hostname, timer);
  }

  #clearTimer(hostname: string): void {
    const timer = this.#timers.get(hostname);
    if (timer !== undefined) clearTimeout(timer);
    this.#timers.delete(hostname);
  }

  #appliance(hostname: string): ApplianceJson | undefined {
    return this.context.registry.byHostname(hostname);
  }
}
