import type { RequestKind } from './data-api-routes.js';

/**
 * What the simulated service was asked, with timestamps, for tests and rehearsals. A caller is
 * named by its label (or `anonymous <address>`), never by its token or password, and headers are
 * not kept: only whether Accept asked for JSON.
 */
export interface ServiceLogEntry {
  seq: number;
  /** Epoch ms of arrival (the rate limit's clock). */
  atMs: number;
  time: string;
  method: string;
  /** Without the query, e.g. `/api/v3/appliance`. */
  path: string;
  query: Record<string, string>;
  /** The endpoint asked (`appliance-list`, `path-create`, ...; `unknown` when none matched). */
  kind: RequestKind;
  caller: string;
  status: number;
  /** `error internal`, `oversized-body`, `raw-body`, `latency 2000 ms`, if one shaped the answer. */
  fault?: string;
  /** For a 429: the Retry-After sent, in seconds. */
  retryAfterS?: number;
}

export class ServiceRequestLog {
  #entries: ServiceLogEntry[] = [];
  #seq = 0;
  #counts: Partial<Record<RequestKind, number>> = {};

  constructor(private readonly limit = 20_000) {}

  add(entry: Omit<ServiceLogEntry, 'seq' | 'time'>): void {
    this.#seq += 1;
    this.#counts[entry.kind] = (this.#counts[entry.kind] ?? 0) + 1;
    this.#entries.push({ seq: this.#seq, time: new Date(entry.atMs).toISOString(), ...entry });
    if (this.#entries.length > this.limit) this.#entries.splice(0, this.#entries.length - this.limit);
  }

  list(): ServiceLogEntry[] {
    return this.#entries.map((e) => structuredClone(e));
  }

  /** Requests of each kind since the last clear (also those the capped log no longer holds), for a bench's budget. */
  counts(): Partial<Record<RequestKind, number>> {
    return { ...this.#counts };
  }

  clear(): void {
    this.#counts = {};
    this.#entries = [];
  }
}
