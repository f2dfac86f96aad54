import { join } from 'node:path';
import { EVENTS_FILE } from './events-log.js';
import { followLines } from './jsonl-follower.js';
import { availableNames, ServiceEvent } from './service-event.js';

/**
 * Follows `<state_dir>/events.jsonl` as `mpprov observe` on the same host writes it, and calls
 * `onAvailable` with the MP's names for each SEQUENCER_EVENT AVAILABLE that arrives after the start
 * (older events say nothing about a wait that begins now).
 */

export { FOLLOW_EVERY_MS } from './jsonl-follower.js';

export function followAvailableEvents(
  stateDir: string,
  onAvailable: (names: readonly string[]) => void,
  everyMs?: number,
): () => void {
  return followLines(
    join(stateDir, EVENTS_FILE),
    (line) => {
      const names = namesOfLine(line);
      if (names.length > 0) onAvailable(names);
    },
    everyMs,
  );
}

function namesOfLine(line: string): string[] {
  try {
    const parsed = ServiceEvent.safeParse((JSON.parse(line) as { event?: unknown }).event);
    return parsed.success ? availableNames(parsed.data) : [];
  } catch {
    return [];
  }
}
