import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { serviceEventLines } from '../../src/agent/service-event-lines.js';
import { createEventsLog } from '../../src/observe/events-log.js';

/**
 * A flood of events for one MP of a job, each with a description as long as the receiver takes:
 * the status page's list stays the last 50 lines of one short sentence each, not megabytes per refresh.
 */

let dir: string | undefined;
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('service events on the status page under a flood', () => {
  it('keeps the last 50 events of the MP, each text cut to a line', async () => {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-page-flood-'));
    const log = createEventsLog(dir);
    for (let i = 0; i < 120; i++)
      await log.append({
        received: new Date(Date.UTC(2026, 10, 28, 12, 0, i)).toISOString(),
        event: { type: 'SEQUENCER_EVENT', sequencerName: 'mp1', description: `event ${i} ${'x'.repeat(40_000)}` },
      });
    const lines = await serviceEventLines(dir, ['mp1']);
    expect(lines).toHaveLength(50);
    expect(lines[0]?.text.startsWith('event 70 xxx')).toBe(true);
    expect(lines.at(-1)?.text.startsWith('event 119 xxx')).toBe(true);
    for (const line of lines) expect(line.text.length).toBeLessThanOrEqual(301);
  });
});
