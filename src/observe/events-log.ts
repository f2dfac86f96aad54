import { constants, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { openRegularFile, readRegularTail } from './regular-file.js';
import { ServiceEvent } from './service-event.js';

/**
 * `<state_dir>/events.jsonl`: one `{"received", "event"}` line per accepted event, read by apply,
 * run and the status page on the same host. Bounded: past MAX_LOG_BYTES the file becomes
 * events.jsonl.1 (the one before is dropped), so a chatty fleet never fills the disk. Only a
 * regular file is written or read (regular-file.ts): a symlink or FIFO in its place is refused.
 */

export const EVENTS_FILE = 'events.jsonl';
export const MAX_LOG_BYTES = 4 * 1024 * 1024;

export interface LoggedEvent {
  /** ISO time the receiver accepted it. */
  received: string;
  event: ServiceEvent;
}

/** What is written: the event object as it came (agent-config.md: `{"received", "event": {...as received}}`). */
export interface EventToLog {
  received: string;
  event: Record<string, unknown>;
}

/**
 * One line appended, the file rotated first when it is full. Not safe to call concurrently for one
 * folder (two callers could both rotate): the receiver goes through `createEventsLog`.
 */
export async function appendEvent(
  stateDir: string,
  entry: EventToLog,
  maxBytes: number = MAX_LOG_BYTES,
): Promise<void> {
  const file = join(stateDir, EVENTS_FILE);
  const flags = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT;
  let handle = await openRegularFile(file, flags);
  try {
    let { size } = await handle.stat();
    if (size > 0 && size >= maxBytes) {
      await handle.close();
      await rename(file, `${file}.1`);
      handle = await openRegularFile(file, flags);
      size = (await handle.stat()).size;
    }
    // A writer killed mid-line left no newline: without one, that stump would swallow this line too.
    const last = Buffer.alloc(1);
    if (size > 0) await handle.read(last, 0, 1, size - 1);
    const cut = size > 0 && last[0] !== 0x0a;
    await handle.write(`${cut ? '\n' : ''}${JSON.stringify(entry)}\n`);
  } finally {
    await handle.close();
  }
}

/** Lines waiting for the disk before new ones are dropped: what a flood may hold in memory. */
export const MAX_QUEUED = 1_000;

export interface EventsLog {
  /** Queues one line; undefined when MAX_QUEUED lines already wait (the event is dropped). */
  append(entry: EventToLog): Promise<void> | undefined;
  /** Lines queued and not yet written. */
  pending(): number;
}

/**
 * The receiver's writer: appends one at a time, so a burst never races the rotation and loses
 * lines; and a bounded queue, since the receiver answers faster than a slow disk writes.
 */
export function createEventsLog(stateDir: string, maxBytes: number = MAX_LOG_BYTES): EventsLog {
  let queue: Promise<unknown> = Promise.resolve();
  let waiting = 0;
  return {
    append(entry) {
      if (waiting >= MAX_QUEUED) return undefined;
      waiting += 1;
      const next = queue.then(() => appendEvent(stateDir, entry, maxBytes)).finally(() => (waiting -= 1));
      queue = next.catch(() => undefined);
      return next;
    },
    pending: () => waiting,
  };
}

/** The logged events, oldest first (the rotated file, then the current one); a damaged line is skipped. */
export async function readEvents(stateDir: string): Promise<LoggedEvent[]> {
  const file = join(stateDir, EVENTS_FILE);
  // Twice the bound: the writer rotates once past it, so a file it wrote is never cut here; one
  // grown by someone else is read from its end.
  const texts = await Promise.all([`${file}.1`, file].map((f) => readRegularTail(f, 2 * MAX_LOG_BYTES)));
  const events: LoggedEvent[] = [];
  for (const line of texts.join('\n').split('\n')) {
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
