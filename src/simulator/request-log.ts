import { isWriteOnlyField } from './stanza.js';

/**
 * What the device was asked, for tests and rehearsals (GET /_sim/state). Bodies are logged with
 * every write-only value replaced, so no password or passphrase ever reaches the log.
 */
export interface RequestLogEntry {
  time: string;
  method: string;
  path: string;
  query: Record<string, string>;
  status: number | null;
  /** The JSON body (write-only values redacted), or for an upload the file names per part. */
  body?: unknown;
  /** The fault that shaped the answer (`drop`, `error`, `latency`), if any. */
  fault?: string;
}

const REDACTED = '(redacted)';

export function redactBody(body: unknown): unknown {
  if (Array.isArray(body)) return body.map(redactBody);
  if (typeof body !== 'object' || body === null) return body;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    out[key] = isWriteOnlyField(key) ? REDACTED : redactBody(value);
  }
  return out;
}

export class RequestLog {
  private entries: RequestLogEntry[] = [];

  constructor(private readonly limit = 1000) {}

  add(entry: RequestLogEntry): void {
    this.entries.push(entry);
    // Keep the newest entries: fleet mode holds 200 logs in one process.
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
  }

  list(): RequestLogEntry[] {
    return this.entries.map((e) => structuredClone(e));
  }

  clear(): void {
    this.entries = [];
  }
}
