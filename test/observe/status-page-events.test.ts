import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createJobBoard } from '../../src/agent/job-board.js';
import { serviceEventLines } from '../../src/agent/service-event-lines.js';
import { Redactor } from '../../src/core/redact.js';
import { appendEvent } from '../../src/observe/events-log.js';
import { startStatusPage, type StatusPage } from '../../src/status-page/index.js';
import { PAGE_JS } from '../../src/status-page/page-assets.js';

/** The status page lists the service's events of its jobs' MPs, from a real events.jsonl, escaped. */

let page: StatusPage | undefined;
let dir: string | undefined;
afterEach(async () => {
  await page?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('service events on the status page', () => {
  it("lists only the jobs' MPs' events, control characters escaped, and the page sets them as text", async () => {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-page-events-'));
    const hostile = 'Monitoring Point mp1 is AVAILABLE <script>alert(1)</script>\u001b[2J';
    await appendEvent(dir, {
      received: '2026-11-28T12:00:00.000Z',
      event: { type: 'SEQUENCER_EVENT', sequencerName: 'mp1', sequencerStatus: 'AVAILABLE', description: hostile },
    });
    await appendEvent(dir, {
      received: '2026-11-28T12:00:01.000Z',
      event: { type: 'SEQUENCER_EVENT', sequencerName: 'other-mp', sequencerStatus: 'AVAILABLE' },
    });
    const redactor = new Redactor();
    const board = createJobBoard({ redactor, version: '0.1.0', hostname: 'laptop' });
    const job = 'j20261128-120000-ab12';
    board.start(job, {
      kind: 'stick',
      label: 'MPSTICK',
      location: '/media/MPSTICK',
      config: 'mpprov.yaml',
      started: new Date(),
      stage: 'start',
    });
    board.expect(job, [{ name: 'mp1', url: 'https://192.0.2.10' }]);
    const stateDir = dir;
    page = await startStatusPage({
      host: '127.0.0.1',
      port: 0,
      source: board,
      readLog: () => Promise.resolve(undefined),
      isJobId: () => false,
      redact: (text) => redactor.text(text),
      serviceEvents: (names) => serviceEventLines(stateDir, names),
    });
    const answer = await request(`http://127.0.0.1:${page.port}/service-events.json`);
    expect(answer.statusCode).toBe(200);
    const text = await answer.body.text();
    expect([...text].some((c) => c.charCodeAt(0) < 0x20)).toBe(false);
    const lines = JSON.parse(text) as { received: string; mp: string; text: string }[];
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ received: '2026-11-28T12:00:00.000Z', mp: 'mp1' });
    expect(lines[0]?.text).toContain('<script>alert(1)</script>');
    expect(lines[0]?.text).not.toContain('\u001b');
    // Shown with textContent (el()), so the markup above is text on the page, never HTML.
    expect(PAGE_JS).toContain("el('p', 'service-event'");
    expect(PAGE_JS).not.toContain('innerHTML');
  });
});
