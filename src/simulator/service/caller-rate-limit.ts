/**
 * The service's limit per caller (50 requests per 10 s, configurable): a sliding window over the
 * requests it accepted. A refused request is answered 429 and does not count.
 */
export interface CallerLimit {
  requests: number;
  windowMs: number;
}

export const SIM_DATA_API_LIMIT: CallerLimit = { requests: 50, windowMs: 10_000 };

export class CallerRateLimit {
  readonly #accepted = new Map<string, number[]>();

  constructor(readonly limit: CallerLimit) {}

  /** 0 when `caller` may go now (and the request is counted), else whole seconds to wait (>= 1). */
  admit(caller: string, now: number): number {
    const recent = (this.#accepted.get(caller) ?? []).filter((t) => now - t < this.limit.windowMs);
    if (recent.length >= this.limit.requests) {
      this.#accepted.set(caller, recent);
      const oldest = recent[0] ?? now;
      return Math.max(1, Math.ceil((oldest + this.limit.windowMs - now) / 1000));
    }
    recent.push(now);
    this.#accepted.set(caller, recent);
    return 0;
  }

  clear(): void {
    this.#accepted.clear();
  }
}
