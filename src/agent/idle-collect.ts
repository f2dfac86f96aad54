import { getHeapStatistics } from 'node:v8';

/** At most one full collection this often: a stream of short jobs pays for one, not one each. */
const MIN_INTERVAL_MS = 5_000;

/**
 * A full garbage collection when the agent has no job left. Each job leaves garbage in V8's old
 * generation, and tied to it native memory (TLS connections, sockets, buffers) that the allocator
 * keeps; V8 runs its first full collections only once the old generation reaches a limit far above
 * the agent's live heap (~20 MiB), or after a long quiet spell. Back to back, 200 jobs took the
 * agent from 83 to 143 MiB resident with a live heap of 22 MiB (bench/daemon.mjs). One collection
 * when idle, at most every 5 s, gives that memory back for the next job.
 *
 * It needs `gc`, which node exposes with --expose-gc (the unit's NODE_OPTIONS); without it the
 * collector does nothing and V8 collects as it always does.
 */
export interface IdleCollector {
  /** A job started: a collection still waiting for the agent to be idle is not due. */
  busy(): void;
  /** No job runs now: collect at once, or as soon as MIN_INTERVAL_MS since the last one passed. */
  idle(): void;
  close(): void;
}

export interface IdleCollectorOptions {
  /** The collection itself (globalThis.gc when exposed); undefined: never collect. */
  gc: (() => void) | undefined;
  /** After each collection: the heap in use before and after it, and how long it took. */
  onCollected?: (beforeBytes: number, afterBytes: number, tookMs: number) => void;
  minIntervalMs?: number;
  /** The clock (performance.now by default). */
  now?: () => number;
}

export function createIdleCollector(options: IdleCollectorOptions): IdleCollector {
  const { gc } = options;
  const minIntervalMs = options.minIntervalMs ?? MIN_INTERVAL_MS;
  const now = options.now ?? (() => performance.now());
  let last = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const collect = (): void => {
    timer = undefined;
    if (closed || gc === undefined) return;
    const before = getHeapStatistics().used_heap_size;
    const started = now();
    gc();
    last = now();
    options.onCollected?.(before, getHeapStatistics().used_heap_size, last - started);
  };

  return {
    busy() {
      clearTimeout(timer);
      timer = undefined;
    },
    idle() {
      if (closed || gc === undefined || timer !== undefined) return;
      // Not inside the job's own settling: after the I/O callbacks now under way.
      timer = setTimeout(collect, Math.max(0, last + minIntervalMs - now()));
      timer.unref();
    },
    close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/** globalThis.gc when node runs with --expose-gc, else undefined. */
export function exposedGc(): (() => void) | undefined {
  const gc: unknown = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? () => void (gc as () => unknown)() : undefined;
}
