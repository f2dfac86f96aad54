import type { PollConfirmation } from './poll-confirmations.js';

/**
 * Silence that the fleet's activity does not explain: a run on this host saw an MP down, then a
 * poll round confirmed it AVAILABLE, and no AVAILABLE event for it reached this receiver within
 * a grace after that round (deliveries are asynchronous: the event may trail the round a little).
 * The service sends an event for every such change, so either it lost one or it stopped sending
 * to us: `onMissed` makes the registration check come now instead of at `check_s`.
 */

/** How long after the confirming round the event may still come. */
export const MISSED_EVENT_GRACE_MS = 5_000;

/** Names remembered with their last AVAILABLE event; the oldest go first past this many. */
const MAX_REMEMBERED = 4_096;
/** Confirmations waiting for their grace; a flood past this is not judged (one missed event is enough). */
const MAX_PENDING = 1_024;

export interface MissedEventJudge {
  /** An AVAILABLE event for these names was accepted now. */
  available(names: readonly string[], at?: number): void;
  /** A run's poll round confirmed an MP: judged once the grace has passed. */
  confirmed(confirmation: PollConfirmation): void;
  close(): void;
}

export function createMissedEventJudge(options: {
  onMissed: (hostname: string) => void;
  graceMs?: number | undefined;
}): MissedEventJudge {
  const graceMs = options.graceMs ?? MISSED_EVENT_GRACE_MS;
  const lastAvailable = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const judge = ({ hostname, downSeenAt }: PollConfirmation): void => {
    const at = lastAvailable.get(hostname.toLowerCase());
    if (at === undefined || at < downSeenAt) options.onMissed(hostname);
  };
  return {
    available(names, at = Date.now()) {
      for (const name of names) {
        const key = name.toLowerCase();
        lastAvailable.delete(key);
        lastAvailable.set(key, at);
      }
      for (const key of lastAvailable.keys()) {
        if (lastAvailable.size <= MAX_REMEMBERED) break;
        lastAvailable.delete(key);
      }
    },
    confirmed(confirmation) {
      if (timers.size >= MAX_PENDING) return;
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          judge(confirmation);
        },
        Math.max(0, confirmation.confirmedAt + graceMs - Date.now()),
      );
      timer.unref();
      timers.add(timer);
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
