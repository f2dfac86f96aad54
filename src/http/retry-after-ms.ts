const RetryAfterLimits = {
  /** When a 429 comes without a usable Retry-After. */
  defaultMs: 1_000,
  /** A peer asking for minutes would stall a whole run: capped. */
  maxMs: 60_000,
} as const;

/** Retry-After in seconds or as an HTTP date (RFC 9110 10.2.3), capped. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || value === '') return RetryAfterLimits.defaultMs;
  let ms: number;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  // Every HTTP date names its weekday or month: a signed or decimal number is neither form, and
  // Date.parse would read `-86400` as the year 86400 (a minute's pause) and `-5` as 2001 (none).
  else if (!/[A-Za-z]/.test(value)) return RetryAfterLimits.defaultMs;
  else {
    const date = Date.parse(value);
    if (Number.isNaN(date)) return RetryAfterLimits.defaultMs;
    ms = Math.max(0, date - now);
  }
  return Math.min(ms, RetryAfterLimits.maxMs);
}
