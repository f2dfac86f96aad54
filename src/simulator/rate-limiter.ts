/**
 * The device's limit on service actions (vendor material: 1 per second and 12 per minute for
 * PUT /service/...). A sliding window over accepted actions; a refused one gets Retry-After.
 */
export interface RateLimit {
  perSecond: number;
  perMinute: number;
}

export const DEFAULT_SERVICE_RATE_LIMIT: RateLimit = { perSecond: 1, perMinute: 12 };

export class RateLimiter {
  private accepted: number[] = [];

  constructor(
    readonly limit: RateLimit,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds to wait before the next action is accepted; 0 when it may go now. */
  retryAfterSeconds(): number {
    const now = this.now();
    this.accepted = this.accepted.filter((t) => now - t < 60_000);
    const waits: number[] = [];
    const inLastSecond = this.accepted.filter((t) => now - t < 1000);
    if (inLastSecond.length >= this.limit.perSecond) waits.push((inLastSecond[0] ?? now) + 1000 - now);
    if (this.accepted.length >= this.limit.perMinute) waits.push((this.accepted[0] ?? now) + 60_000 - now);
    return waits.length === 0 ? 0 : Math.max(1, Math.ceil(Math.max(...waits) / 1000));
  }

  record(): void {
    this.accepted.push(this.now());
  }

  clear(): void {
    this.accepted = [];
  }
}
