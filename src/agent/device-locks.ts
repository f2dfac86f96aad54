/**
 * One job at a time per Monitoring Point: a job takes a lock per device key (run-job.ts keys a
 * device by its resolved addresses and port, client/device-identity.ts) before it talks to
 * any of them, always in sorted order, so two jobs sharing devices cannot deadlock. Jobs for
 * other devices run in parallel.
 */
export interface DeviceLocks {
  /** Who holds the lock of each URL now (job id). */
  holders(urls: readonly string[]): Map<string, string>;
  /** Waits for every URL's lock; the returned function releases them. Rejects if `signal` aborts first. */
  acquire(urls: readonly string[], jobId: string, signal?: AbortSignal): Promise<() => void>;
}

interface Lock {
  holder: string;
  waiters: (() => void)[];
}

export function createDeviceLocks(): DeviceLocks {
  const locks = new Map<string, Lock>();

  const takeOne = (url: string, jobId: string, signal?: AbortSignal): Promise<void> =>
    new Promise((resolve, reject) => {
      const lock = locks.get(url);
      if (lock === undefined) {
        locks.set(url, { holder: jobId, waiters: [] });
        resolve();
        return;
      }
      const waiter = (): void => {
        signal?.removeEventListener('abort', onAbort);
        lock.holder = jobId;
        resolve();
      };
      const onAbort = (): void => {
        const at = lock.waiters.indexOf(waiter);
        if (at >= 0) lock.waiters.splice(at, 1);
        reject(signal?.reason ?? new Error('aborted'));
      };
      if (signal?.aborted === true) {
        reject(signal.reason);
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      lock.waiters.push(waiter);
    });

  const releaseOne = (url: string): void => {
    const lock = locks.get(url);
    if (lock === undefined) return;
    const next = lock.waiters.shift();
    if (next === undefined) locks.delete(url);
    else next();
  };

  return {
    holders(urls) {
      const out = new Map<string, string>();
      for (const url of urls) {
        const holder = locks.get(url)?.holder;
        if (holder !== undefined) out.set(url, holder);
      }
      return out;
    },
    async acquire(urls, jobId, signal) {
      const sorted = [...new Set(urls)].sort();
      const taken: string[] = [];
      try {
        for (const url of sorted) {
          await takeOne(url, jobId, signal);
          taken.push(url);
        }
      } catch (error) {
        for (const url of taken.reverse()) releaseOne(url);
        throw error;
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        for (const url of taken.reverse()) releaseOne(url);
      };
    },
  };
}
