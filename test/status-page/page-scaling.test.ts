import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_ID_PATTERN } from '../../src/agent/index.js';
import { createJobBoard } from '../../src/agent/job-board.js';
import { Redactor } from '../../src/core/redact.js';
import { type StatusPage, startStatusPage } from '../../src/status-page/index.js';

/**
 * The status page after ten jobs (success, failure, a pulled stick), in Debian's Chromium through
 * puppeteer-core, at 1280x800 and 360x740: one banner for the newest result, older results as
 * compact rows, no horizontal scroll, the newest result visible without scrolling, at most three
 * screens tall, and a job's log opening at its end. Screenshots go to .test-output/.
 */

const CHROMIUM = '/usr/bin/chromium';
const OUTPUT = fileURLToPath(new URL('../../.test-output/', import.meta.url));

const id = (n: number): string => `j20261128-1${String(n).padStart(2, '0')}000-ab${String(n).padStart(2, '0')}`;
const LOG_LINES = 300;
const logOf = (job: string): string =>
  Array.from(
    { length: LOG_LINES },
    (_, i) => `12:00:${String(i % 60).padStart(2, '0')}.000 [${job}] line ${i + 1}`,
  ).join('\n') + `\n12:01:00.000 [${job}] RESULT: FAILED  the end of ${job}\n`;

describe('the status page after ten jobs', () => {
  let browser: Browser | undefined;
  let page: StatusPage | undefined;

  beforeAll(async () => {
    await mkdir(OUTPUT, { recursive: true });
    const board = createJobBoard({ redactor: new Redactor(), version: '0.1.0', hostname: 'laptop' });
    for (let n = 1; n <= 10; n++) {
      const kind = n % 3 === 0 ? 'failed' : n % 3 === 1 ? 'changed' : 'pulled';
      const started = new Date(Date.UTC(2026, 10, 28, 12, n, 0));
      const label = `BRANCH-${String(n).padStart(2, '0')}-STICK`;
      board.start(id(n), {
        kind: 'stick',
        label,
        location: `/media/technician-with-a-long-name/${label}`,
        config: 'mpprov.yaml',
        started,
        stage: 'applying',
      });
      board.expect(id(n), [{ name: `branch-${n}-mp1`, url: `https://192.0.2.${n}` }]);
      board.end(id(n), {
        result: kind === 'failed' ? 'FAILED' : 'CHANGED',
        summary: `mpprov ${kind === 'failed' ? 'FAILED' : 'CHANGED'} at 12:0${n % 10} (stick ${label}, mpprov.yaml, job ${id(n)}): branch-${n}-mp1: ${kind === 'failed' ? 'failed, cannot be reached' : 'changed and verified'}.`,
        ...(kind === 'failed'
          ? {
              advice: `What to do: branch-${n}-mp1: cannot reach https://192.0.2.${n}: connection refused. Check that the MP is powered and its link LED is on, that the laptop's cable is in the MP's management port.`,
            }
          : {}),
        released: kind === 'changed',
        removal:
          kind === 'pulled'
            ? {
                kind: 'pulled',
                sentence: 'The stick was removed before its result was written: insert it again to get the result.',
              }
            : {
                kind: 'released',
                sentence: 'Results written and synced; the agent unmounted the stick: it is safe to remove.',
              },
        finished: new Date(started.getTime() + 30_000),
      });
    }
    page = await startStatusPage({
      host: '127.0.0.1',
      port: 0,
      source: board,
      readLog: (job) => Promise.resolve(logOf(job)),
      isJobId: (job) => JOB_ID_PATTERN.test(job),
      redact: (text) => text,
    });
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await page?.close();
  });

  async function open(width: number, height: number): Promise<Page> {
    const tab = await (browser as Browser).newPage();
    await tab.setViewport({ width, height });
    await tab.goto(page?.url ?? '', { waitUntil: 'domcontentloaded' });
    await tab.waitForSelector('#connection[data-state="live"]', { timeout: 10_000 });
    await tab.waitForSelector('#recent details.recent-job', { timeout: 10_000 });
    return tab;
  }

  /** Browser-side measurements, as text: this project's type check has no DOM library. */
  const layout = (tab: Page) =>
    tab.evaluate(`(() => {
      const banner = document.querySelector('#banners .banner');
      const rect = banner.getBoundingClientRect();
      return {
        banners: document.querySelectorAll('#banners .banner').length,
        newest: banner.dataset.job,
        bannerBottom: rect.bottom,
        scrollWidth: document.documentElement.scrollWidth,
        innerWidth: window.innerWidth,
        scrollHeight: document.documentElement.scrollHeight,
        innerHeight: window.innerHeight,
        rows: document.querySelectorAll('#recent details.recent-job').length,
        openRows: document.querySelectorAll('#recent details.recent-job[open]').length,
      };
    })()`) as Promise<{
      banners: number;
      newest: string;
      bannerBottom: number;
      scrollWidth: number;
      innerWidth: number;
      scrollHeight: number;
      innerHeight: number;
      rows: number;
      openRows: number;
    }>;

  it.each([
    [1280, 800],
    [360, 740],
  ])(
    'at %i x %i: one banner, compact rows, no horizontal scroll, the newest visible, at most three screens',
    async (width, height) => {
      const tab = await open(width, height);
      await tab.screenshot({ path: join(OUTPUT, `status-page-10-jobs-${width}.png`), fullPage: true });
      const seen = await layout(tab);
      expect(seen.banners).toBe(1);
      expect(seen.newest).toBe(id(10));
      expect(seen.rows).toBe(10);
      expect(seen.openRows).toBe(1);
      expect(seen.scrollWidth).toBeLessThanOrEqual(seen.innerWidth);
      expect(seen.bannerBottom).toBeLessThanOrEqual(seen.innerHeight);
      expect(seen.scrollHeight).toBeLessThanOrEqual(3 * seen.innerHeight);
      await tab.close();
    },
  );

  it("a job's usb.log opens at its end, where the failure is", async () => {
    const tab = await open(360, 740);
    await tab.click(`#recent details.recent-job[data-job="${id(10)}"] details.log summary`);
    await tab.waitForFunction(
      `(document.querySelector('details.log[data-job="${id(10)}"] pre')?.textContent ?? '').includes('RESULT: FAILED')`,
      { timeout: 10_000 },
    );
    const scrolled = (await tab.evaluate(`(() => {
      const pre = document.querySelector('details.log[data-job="${id(10)}"] pre');
      return { top: pre.scrollTop, height: pre.clientHeight, total: pre.scrollHeight };
    })()`)) as { top: number; height: number; total: number };
    expect(scrolled.total).toBeGreaterThan(scrolled.height);
    expect(scrolled.top + scrolled.height).toBeGreaterThanOrEqual(scrolled.total - 2);
    await tab.close();
  });
});
