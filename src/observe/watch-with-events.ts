import type { ServiceWatch } from '../service/index.js';
import { followAvailableEvents } from './event-follower.js';
import { appendPollConfirmation } from './poll-confirmations.js';

/**
 * A run's watch on a host where `mpprov observe` writes events.jsonl: each AVAILABLE event hints
 * the watch (a round comes soon for that MP), and each wait that a poll round ended without any
 * event (the MP was seen down, then confirmed AVAILABLE, and no AVAILABLE event for it was read
 * since) is told to the receiver through poll-confirmations.jsonl, so it checks its registration
 * at once: a service that stopped sending is noticed by the first MP that comes back without it.
 */

export interface WatchWithEvents {
  watch: ServiceWatch;
  stop(): void;
}

export function watchWithEvents(stateDir: string, inner: ServiceWatch, everyMs?: number): WatchWithEvents {
  const lastEvent = new Map<string, number>();
  const stop = followAvailableEvents(
    stateDir,
    (names) => {
      const now = Date.now();
      for (const name of names) {
        // Bounded like the fleet: a name seen again moves to the end, the oldest go first.
        lastEvent.delete(name.toLowerCase());
        lastEvent.set(name.toLowerCase(), now);
        inner.hint(name);
      }
      for (const key of lastEvent.keys()) {
        if (lastEvent.size <= 4_096) break;
        lastEvent.delete(key);
      }
    },
    everyMs,
  );
  const watch: ServiceWatch = {
    ...inner,
    async waitConnected(hostname, options) {
      let downSeenAt: number | undefined;
      const outcome = await inner.waitConnected(hostname, {
        ...options,
        onProgress: (progress) => {
          if (progress.status !== undefined && progress.status !== 'AVAILABLE') downSeenAt = Date.now();
          options.onProgress?.(progress);
        },
      });
      const eventAt = lastEvent.get(hostname.toLowerCase());
      if (outcome.connected && downSeenAt !== undefined && (eventAt === undefined || eventAt < downSeenAt)) {
        // Best effort: a state folder that cannot be written costs only the early check.
        await appendPollConfirmation(stateDir, { hostname, downSeenAt, confirmedAt: Date.now() }).catch(
          () => undefined,
        );
      }
      return outcome;
    },
  };
  return { watch, stop };
}
