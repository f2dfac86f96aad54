import { readEvents } from '../observe/index.js';
import type { ServiceEventLine } from '../status-page/index.js';

/**
 * The events `mpprov observe` logged for MPs of these names, for the status page: matched on the
 * event's sequencerName or sequencerHost (an SQA_EVENT also on its target), newest last.
 */
export async function serviceEventLines(stateDir: string, names: readonly string[]): Promise<ServiceEventLine[]> {
  const wanted = new Set(names.map((n) => n.toLowerCase()));
  if (wanted.size === 0) return [];
  const lines: ServiceEventLine[] = [];
  for (const { received, event } of await readEvents(stateDir)) {
    const target = typeof event['target'] === 'string' ? event['target'] : undefined;
    const mp = [event.sequencerName, event.sequencerHost, target].find(
      (n) => n !== undefined && wanted.has(n.toLowerCase()),
    );
    if (mp === undefined) continue;
    const text = event.description ?? [event.type, event.sequencerStatus].filter(Boolean).join(' ');
    lines.push({
      received: received.slice(0, 40),
      mp,
      text: text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text,
    });
  }
  // The page shows the last 50: a flood of events for one MP must not make each page refresh megabytes.
  return lines.slice(-MAX_LINES);
}

const MAX_LINES = 50;
/** A service's sentence is one line; an event's 64 KiB description is not read on a status page. */
const MAX_TEXT = 300;
