/**
 * The data API's limit, kept by the client itself: 50 requests per 10 seconds per caller
 * (docs/service-model.md, "Transport"), shared by every device of a run, since they all use one token.
 *
 * A token bucket of `requests` tokens. A request takes one before it is sent, and the token comes
 * back one window (plus a small margin) after that request *ended*, not after it was sent: the
 * service counts arrivals, and an arrival always lies before the end of its exchange, so however
 * long a request waited in a queue or on the wire, no `requests + 1` arrivals can fall into one
 * window. (A bucket refilled at a steady rate would not do: a full bucket spent at once, plus the
 * refill during the next window, is nearly twice the limit within one window.)
 * Waiters are served first come, first served within their priority: a round that answers many
 * devices at once (`high`) goes before single writes queued earlier (`normal`), so a queue of path
 * creations never holds up the confirmation of a fleet. A few tokens (`highReserve`) are kept
 * for `high` turns alone: a burst of writes that spent every token would otherwise hold a round
 * up until the first of them came back, a whole window later.
 */

export type Priority = 'high' | 'normal';

export interface RateLimit {
  requests: number;
  windowMs: number;
  /** Added to each token's return for timer and clock jitter; default 250 ms. */
  marginMs?: number;
  /** Tokens only `high` turns may take; default 0. */
  highReserve?: number;
}

/** A round asks at most every 2 s (5 per window): 5 tokens kept for rounds leave 45 for writes. */
export const DATA_API_RATE_LIMIT: RateLimit = { requests: 50, windowMs: 10_000, highReserve: 5 };

const DEFAULT_MARGIN_MS = 250;

/** One request's token: give it back with `release()` when the exchange has ended, however it ended. */
export interface Turn {
  release(): void;
}

interface Waiter {
  priority: Priority;
  resolve(turn: Turn): void;
  reject(reason: unknown): void;
  cleanup(): void;
}

export class RateLimiter {
  readonly limit: Required<RateLimit>;
  /** Tokens out: in flight (Infinity) or returning at a time. */
  #out: number[] = [];
  #queue: Waiter[] = [];
  #pausedUntil = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(limit: RateLimit = DATA_API_RATE_LIMIT) {
    if (!Number.isInteger(limit.requests) || limit.requests < 1 || !(limit.windowMs > 0)) {
      throw new RangeError(
        `a rate limit needs at least 1 request per window, got ${limit.requests} per ${limit.windowMs} ms`,
      );
    }
    this.limit = { marginMs: DEFAULT_MARGIN_MS, highReserve: 0, ...limit };
    if (
      !Number.isInteger(this.limit.highReserve) ||
      this.limit.highReserve < 0 ||
      this.limit.highReserve >= limit.requests
    )
      throw new RangeError(
        `a rate limit's high reserve must leave other turns at least 1 request, got ${this.limit.highReserve}`,
      );
  }

  /** Waits for a token; rejects with the signal's reason when aborted first. */
  acquire(signal?: AbortSignal, priority: Priority = 'normal'): Promise<Turn> {
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#remove(waiter);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        priority,
        resolve,
        reject,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (priority === 'high') {
        const firstNormal = this.#queue.findIndex((w) => w.priority === 'normal');
        this.#queue.splice(firstNormal < 0 ? this.#queue.length : firstNormal, 0, waiter);
      } else this.#queue.push(waiter);
      this.#pump();
    });
  }

  /** After a 429: no token is handed out before `untilMs` (epoch ms), whoever asks. */
  pauseUntil(untilMs: number): void {
    if (untilMs <= this.#pausedUntil) return;
    this.#pausedUntil = untilMs;
    this.#pump();
  }

  /** Tokens out now (in flight or not yet back): for tests and progress lines. */
  get tokensOut(): number {
    this.#dropReturned(Date.now());
    return this.#out.length;
  }

  get waiting(): number {
    return this.#queue.length;
  }

  #remove(waiter: Waiter): void {
    const index = this.#queue.indexOf(waiter);
    if (index >= 0) this.#queue.splice(index, 1);
    waiter.cleanup();
    // Nobody left to wake: a pause timer (a hostile Retry-After) must not keep the process alive.
    if (this.#queue.length === 0) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #dropReturned(now: number): void {
    this.#out = this.#out.filter((returnsAt) => returnsAt > now);
  }

  #pump(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const now = Date.now();
    this.#dropReturned(now);
    // The queue holds every high turn before any normal one, so its head decides.
    const capacity = () =>
      this.#queue[0]?.priority === 'high' ? this.limit.requests : this.limit.requests - this.limit.highReserve;
    while (this.#queue.length > 0 && this.#out.length < capacity() && now >= this.#pausedUntil) {
      const waiter = this.#queue.shift() as Waiter;
      waiter.cleanup();
      waiter.resolve(this.#take());
    }
    if (this.#queue.length === 0) return;
    // Wake up when the pause ends or the next token returns; a token in flight wakes us on release.
    const returning = this.#out.filter((t) => t !== Infinity);
    const nextReturn = this.#out.length < capacity() ? now : returning.length === 0 ? Infinity : Math.min(...returning);
    const wakeAt = Math.max(nextReturn, this.#pausedUntil);
    if (wakeAt !== Infinity) this.#timer = setTimeout(() => this.#pump(), Math.max(0, wakeAt - now));
  }

  #take(): Turn {
    // In flight: the token's return time is set when the exchange ends. Tokens in flight are
    // interchangeable, so release() turns any one Infinity into a return time.
    this.#out.push(Infinity);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const index = this.#out.indexOf(Infinity);
        if (index >= 0) this.#out[index] = Date.now() + this.limit.windowMs + this.limit.marginMs;
        this.#pump();
      },
    };
  }
}
