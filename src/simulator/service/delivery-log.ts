/**
 * Every event delivery of the simulated service, with its outcome, for tests and rehearsals to
 * count: `answered` (2xx in time), `refused` (another status), `timeout`, `failed` (no connection,
 * TLS), and those never sent: `dropped` (a fault), `queue-full`, `discarded` (the configuration was
 * removed or blacklisted while the event waited). The configuration's owner is its caller label.
 */

export type DeliveryOutcome = 'answered' | 'refused' | 'timeout' | 'failed' | 'dropped' | 'queue-full' | 'discarded';

export interface DeliveryLogEntry {
  seq: number;
  /** Epoch ms when the outcome was known. */
  atMs: number;
  time: string;
  /** The caller label of the configuration's owner. */
  caller: string;
  url: string;
  type: string;
  sequencerName: string;
  sequencerStatus?: string;
  pathId?: number;
  measuredValue?: number;
  eventTime: number;
  outcome: DeliveryOutcome;
  /** The receiver's HTTP status, when it answered at all. */
  status?: number;
  /** `ECONNREFUSED`, `UNABLE_TO_VERIFY_LEAF_SIGNATURE`, `blacklisted`, ... */
  detail?: string;
  /** The delivery faults that shaped it: `drop`, `delay 500 ms`, `duplicate`, `reorder`. */
  fault?: string;
  /** Sent attempts: from the start of the POST to its outcome. */
  durationMs?: number;
  /** True on the attempt whose outcome blacklisted the configuration. */
  blacklisted?: boolean;
}

export class DeliveryLog {
  #entries: DeliveryLogEntry[] = [];
  #seq = 0;
  #counts: Partial<Record<DeliveryOutcome, number>> = {};

  constructor(private readonly limit = 20_000) {}

  add(entry: Omit<DeliveryLogEntry, 'seq' | 'time'>): void {
    this.#seq += 1;
    this.#counts[entry.outcome] = (this.#counts[entry.outcome] ?? 0) + 1;
    this.#entries.push({ seq: this.#seq, time: new Date(entry.atMs).toISOString(), ...entry });
    if (this.#entries.length > this.limit) this.#entries.splice(0, this.#entries.length - this.limit);
  }

  list(): DeliveryLogEntry[] {
    return this.#entries.map((e) => structuredClone(e));
  }

  /** Deliveries per outcome since the last clear (also those the capped log no longer holds). */
  counts(): Partial<Record<DeliveryOutcome, number>> {
    return { ...this.#counts };
  }

  clear(): void {
    this.#counts = {};
    this.#entries = [];
  }
}
