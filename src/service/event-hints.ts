/**
 * Events as hints for the connection rounds: an AVAILABLE event for a waiting MP brings a round
 * forward, for the hinted MPs only, after a short pause that gathers a burst of events into one
 * request (a fleet coming back together is confirmed by one list per organization, not one GET per
 * MP). The event is never taken as the answer: only the round's answer ends a wait. A regular round
 * (the fallback, at its own pace) still asks for every waiting MP.
 */

/** How long a hint waits for others before its round; short beside any wait, long beside a burst of posts. */
const HINT_GATHER_MS = 300;

export interface EventHints {
  /** Records a hint; false when that MP is already hinted for the coming round. */
  add(hostname: string): boolean;
  /** When the hinted round is due (Infinity with no hint). */
  dueAt(lastRoundAt: number): number;
  /** The hinted MPs among `waiters`, the hints then cleared. */
  take<T extends { hostname: string }>(waiters: readonly T[]): T[];
}

export function createEventHints(timing: { minGapMs: number; roundMs: number }): EventHints {
  const hinted = new Set<string>();
  /** When each MP was last asked about for a hint. */
  const askedAt = new Map<string, number>();
  let firstAt = Infinity;
  return {
    add(hostname) {
      const key = hostname.toLowerCase();
      if (hinted.has(key)) return false;
      // One hinted look per MP per regular period: events carry no signature, and a stream of forged
      // AVAILABLEs for an MP still down must not turn into a GET every few hundred milliseconds.
      if (Date.now() - (askedAt.get(key) ?? -Infinity) < timing.roundMs) return false;
      if (hinted.size === 0) firstAt = Date.now();
      hinted.add(key);
      return true;
    },
    dueAt(lastRoundAt) {
      return hinted.size === 0 ? Infinity : Math.max(firstAt + HINT_GATHER_MS, lastRoundAt + timing.minGapMs);
    },
    take(waiters) {
      const members = waiters.filter((w) => hinted.has(w.hostname.toLowerCase()));
      const now = Date.now();
      for (const [key, at] of askedAt) if (now - at >= timing.roundMs) askedAt.delete(key);
      for (const key of hinted) askedAt.set(key, now);
      hinted.clear();
      firstAt = Infinity;
      return members;
    },
  };
}
