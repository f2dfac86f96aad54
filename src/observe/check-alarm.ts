/**
 * The pause between two registration checks, which a missed event cuts short: `ring()` ends the
 * current pause (or the next one, if no pause runs), at most once per `minGapMs`, so a burst of
 * missed events costs one early `GET /v3/observer`, not one each.
 */

export const EARLY_CHECK_GAP_MS = 10_000;

export interface CheckAlarm {
  /** Resolves after `ms`, on `signal`'s abort, or when rung. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Asks for a check now; one rung within `minGapMs` of the last early check waits for the gap's
   * end. False when a check is already asked for (nothing more to say).
   */
  ring(): boolean;
  close(): void;
}

export function createCheckAlarm(minGapMs: number = EARLY_CHECK_GAP_MS): CheckAlarm {
  let wake: (() => void) | undefined;
  let pending = false;
  let lastEarlyAt = -Infinity;
  let deferred: NodeJS.Timeout | undefined;
  const fire = (): void => {
    lastEarlyAt = Date.now();
    if (wake !== undefined) wake();
    else pending = true;
  };
  return {
    sleep(ms, signal) {
      if (pending || signal?.aborted === true) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        signal?.addEventListener('abort', done, { once: true });
        wake = done;
        function done(): void {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          wake = undefined;
          resolve();
        }
      });
    },
    ring() {
      if (deferred !== undefined || pending) return false;
      const wait = lastEarlyAt + minGapMs - Date.now();
      if (wait <= 0) {
        fire();
        return true;
      }
      deferred = setTimeout(() => {
        deferred = undefined;
        fire();
      }, wait);
      deferred.unref();
      return true;
    },
    close() {
      clearTimeout(deferred);
      deferred = undefined;
    },
  };
}
