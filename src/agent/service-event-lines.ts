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
    lines.push({
      received,
      mp,
      text: event.description ?? [event.type, event.sequencerStatus].filter(Boolean).join(' '),
    });
  }
  return lines;
}
