import { constants } from 'node:fs/promises';
import { join } from 'node:path';
import { EVENTS_FILE } from './events-log.js';
import { openRegularFile } from './regular-file.js';
import { MAX_EVENT_BYTES, ServiceEvent } from './service-event.js';

/**
 * Follows `<state_dir>/events.jsonl` as `mpprov observe` on the same host writes it, and calls
 * `onAvailable` with the MP's names for each SEQUENCER_EVENT AVAILABLE that arrives after the start
 * (older events say nothing about a wait that begins now). Polled, not watched: inotify misses a
 * rotation, and a read every half second costs nothing. The timer is unref'd.
 */

export const FOLLOW_EVERY_MS = 500;

export function followAvailableEvents(
  stateDir: string,
  onAvailable: (names: readonly string[]) => void,
  everyMs: number = FOLLOW_EVERY_MS,
): () => void {
  const file = join(stateDir, EVENTS_FILE);
  let offset: number | undefined;
  let inode: number | undefined;
  let partial = '';
  let busy = false;
  const read = async (): Promise<void> => {
    const handle = await openRegularFile(file, constants.O_RDONLY).catch(() => undefined);
    if (handle === undefined) {
      offset ??= 0;
      return;
    }
    try {
      const { size, ino } = await handle.stat();
      // A new file (rotated or replaced) grown past the old offset before this look is still new.
      const replaced = inode !== undefined && ino !== inode;
      inode = ino;
      if (offset === undefined || size < offset || replaced) {
        // First look: start at the end. A rotated file: read the new one whole.
        offset = offset === undefined ? size : 0;
        partial = '';
        if (size === offset) return;
      }
      if (size === offset) return;
      const buffer = Buffer.alloc(Math.min(size - offset, 4 * 1024 * 1024));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      offset += bytesRead;
      const lines = (partial + buffer.subarray(0, bytesRead).toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      // No line the receiver writes is this long: a file without newlines must not grow memory.
      if (partial.length > 4 * MAX_EVENT_BYTES) partial = '';
      for (const line of lines) {
        const names = availableNames(line);
        if (names.length > 0) onAvailable(names);
      }
    } finally {
      await handle.close();
    }
  };
  const tick = (): void => {
    if (busy) return;
    busy = true;
    void read()
      .catch(() => undefined)
      .finally(() => (busy = false));
  };
  tick();
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

function availableNames(line: string): string[] {
  try {
    const parsed = ServiceEvent.safeParse((JSON.parse(line) as { event?: unknown }).event);
    if (!parsed.success) return [];
    const event = parsed.data;
    if (event.type !== 'SEQUENCER_EVENT' || event.sequencerStatus !== 'AVAILABLE') return [];
    return [event.sequencerHost, event.sequencerName].filter((n): n is string => n !== undefined && n !== '');
  } catch {
    return [];
  }
}
