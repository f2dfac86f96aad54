import { appendFile, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ServiceEvent } from './service-event.js';

/**
 * `<state_dir>/events.jsonl`: one `{"received", "event"}` line per accepted event, read by apply,
 * run and the status page on the same host. Bounded: past MAX_LOG_BYTES the file becomes
 * events.jsonl.1 (the one before is dropped), so a chatty fleet never fills the disk.
 */

export const EVENTS_FILE = 'events.jsonl';
export const MAX_LOG_BYTES = 4 * 1024 * 1024;

export interface LoggedEvent {
  /** ISO time the receiver accepted it. */
  received: string;
  event: ServiceEvent;
}

export async function appendEvent(
  stateDir: string,
  entry: LoggedEvent,
  maxBytes: number = MAX_LOG_BYTES,
): Promise<void> {
  const file = join(stateDir, EVENTS_FILE);
  const size = await stat(file).then(
    (s) => s.size,
    () => 0,
  );
  if (size > 0 && size >= maxBytes) await rename(file, `${file}.1`);
  await appendFile(file, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
}

/** The logged events, oldest first (the rotated file, then the current one); a damaged line is skipped. */
export async function readEvents(stateDir: string): Promise<LoggedEvent[]> {
  const file = join(stateDir, EVENTS_FILE);
  const texts = await Promise.all([`${file}.1`, file].map((f) => readFile(f, 'utf8').catch(() => '')));
  const events: LoggedEvent[] = [];
  for (const line of texts.join('').split('\n')) {
    if (line === '') continue;
    try {
      const json = JSON.parse(line) as { received?: unknown; event?: unknown };
      const event = ServiceEvent.safeParse(json.event);
      if (typeof json.received === 'string' && event.success)
        events.push({ received: json.received, event: event.data });
    } catch {
      // A line cut by a crash mid-write: the next ones are still good.
    }
  }
  return events;
}
