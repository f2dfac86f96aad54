import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentProcess, type AgentWorld, waitForJobEnds } from '../daemon/agent-process.js';
import { useAgentRig } from '../daemon/agent-rig.js';
import { PEAP_PASSWORD, stickFiles } from '../support/stick-workspace.js';

/**
 * The status page in a real browser: Debian's Chromium, headless, driven by puppeteer-core (never
 * a downloaded browser), the agent as a child process with status_page on 127.0.0.1:0, real FAT
 * sticks through fusefat. The page is open BEFORE the stick goes in, and must move from WORKING
 * to SAFE TO REMOVE (or FAILED with what to do) by itself, with no reload.
 */

const CHROMIUM = '/usr/bin/chromium';
const OUTPUT = fileURLToPath(new URL('../../.test-output/', import.meta.url));
const WRONG_PASSWORD = 'Not-The-Device-Pw-4242';

/** Browser-side: the job's expanded log holds `text`. */
const logShows = (id: string, text: string): string =>
  `(document.querySelector('details.log[data-job="${id}"] pre')?.textContent ?? '').includes(${JSON.stringify(text)})`;

describe('the status page in headless Chromium', () => {
  const rig = useAgentRig();
  let browser: Browser | undefined;

  beforeAll(async () => {
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      // headless: true is Chromium's new headless mode (--headless=new); root needs --no-sandbox.
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** The agent with its page on a free loopback port, and the page's URL from its journal line. */
  async function agentWithPage(): Promise<{ world: AgentWorld; agent: AgentProcess; url: string }> {
    const world = await rig.makeWorld({
      agentYaml: ({ mediaRoot, stateDir }) =>
        `version: 1\nmedia_roots: [${mediaRoot}]\nstate_dir: ${stateDir}\nlog_level: debug\ntimeouts: { request_s: 5, restart_s: 30 }\nstatus_page: { listen: "127.0.0.1:0" }\n`,
    });
    const agent = await rig.startAgent(world);
    const match = /status page at (http:\/\/127\.0\.0\.1:(\d+)\/)/.exec(await agent.output());
    expect(match, await agent.output()).not.toBeNull();
    expect(Number(match?.[2])).toBeGreaterThan(0);
    return { world, agent, url: match?.[1] ?? '' };
  }

  /** Opens the page and waits until it follows the agent's events; counts navigations after that. */
  async function openPage(url: string): Promise<{ page: Page; navigations: () => number }> {
    const page = await (browser as Browser).newPage();
    await page.setViewport({ width: 1100, height: 900 });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('#connection[data-state="live"]', { timeout: 10_000 });
    expect(errors).toEqual([]);
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    // A reload would lose this: proof that the page changed by itself.
    // Browser-side code as text: this project's type check has no DOM library.
    await page.evaluate('window.stillTheSamePage = true');
    return { page, navigations: () => navigations };
  }

  const bannerText = (page: Page, word: string): Promise<string> =>
    page.$eval(`#banners [data-banner="${word}"]`, (node) => (node as unknown as { innerText: string }).innerText);

  it(
    'open first, then a stick goes in: WORKING, then SAFE TO REMOVE without a reload; its log opens; a screenshot is saved',
    { timeout: 120_000 },
    async () => {
      const sim = await rig.simulator({ restartMs: 1500 });
      const { world, agent, url } = await agentWithPage();
      const { page, navigations } = await openPage(url);
      expect(await page.$$('#banners [data-banner]')).toHaveLength(0);

      await rig.insertStick(world, 'MPSTICK', stickFiles([{ name: 'mp1', sim, dot1x: true }]));
      await page.waitForSelector('#banners [data-banner="WORKING"]', { timeout: 30_000 });
      expect(await bannerText(page, 'WORKING')).toContain('Stick MPSTICK');
      expect(await bannerText(page, 'WORKING')).toContain('Do not remove it.');
      // The live job lists its steps as they run.
      await page.waitForSelector('.live-job tr.step', { timeout: 30_000 });
      await mkdir(OUTPUT, { recursive: true });
      await page.screenshot({ path: join(OUTPUT, 'status-page-working.png'), fullPage: true });

      await page.waitForSelector('#banners [data-banner="SAFE TO REMOVE"]', { timeout: 60_000 });
      const [end] = await waitForJobEnds(world, 1, agent);
      expect(end?.result).toBe('CHANGED');
      expect(await page.$$('#banners [data-banner="WORKING"]')).toHaveLength(0);
      expect(await bannerText(page, 'SAFE TO REMOVE')).toMatch(/SAFE TO REMOVE\s+Stick MPSTICK/);
      expect(await bannerText(page, 'SAFE TO REMOVE')).toContain(
        `(stick MPSTICK, mpprov.yaml, job ${end?.id}): mp1: changed`,
      );
      expect(await bannerText(page, 'SAFE TO REMOVE')).toContain(
        'Results written and synced; the agent unmounted the stick: it is safe to remove.',
      );
      expect(navigations()).toBe(0);
      expect(await page.evaluate('window.stillTheSamePage')).toBe(true);

      // Recent results: the finished job with its step times, and its log behind an expander.
      await page.waitForSelector(`.recent-job[data-job="${end?.id}"]`);
      await page.click(`.recent-job[data-job="${end?.id}"] details.log summary`);
      await page.waitForFunction(logShows(end?.id ?? '', 'RESULT: CHANGED'), { timeout: 10_000 });
      const html = await page.content();
      for (const secret of [sim.password, PEAP_PASSWORD]) expect(html.includes(secret)).toBe(false);

      await page.screenshot({ path: join(OUTPUT, 'status-page.png'), fullPage: true });
      expect((await readFile(join(OUTPUT, 'status-page.png'))).subarray(1, 4).toString()).toBe('PNG');
      await page.close();
    },
  );

  it(
    'a stick with the wrong device password: FAILED with what to do, and the password nowhere on the page',
    { timeout: 120_000 },
    async () => {
      const sim = await rig.simulator({ restartMs: 300 });
      const { world, agent, url } = await agentWithPage();
      const { page, navigations } = await openPage(url);

      await rig.insertStick(world, 'BADPW', {
        ...stickFiles([{ name: 'mp1', sim }]),
        'secrets/mp1.pw': `${WRONG_PASSWORD}\n`,
      });
      await page.waitForSelector('#banners [data-banner="FAILED"]', { timeout: 60_000 });
      const [end] = await waitForJobEnds(world, 1, agent);
      expect(end?.result).toBe('FAILED');
      const text = await bannerText(page, 'FAILED');
      expect(text).toMatch(/^FAILED: what to do\s+Stick BADPW/);
      // The failure table's reason and action for credentials, not a general "read usb.log".
      expect(text).toContain(
        "Check the user name and the password the stick gives for this MP (or agent.yaml's for its URL)",
      );
      expect(navigations()).toBe(0);
      await page.screenshot({ path: join(OUTPUT, 'status-page-failed.png'), fullPage: true });

      // The password the stick carried is a secret of that job: not in the page, the status, or the log.
      await page.click(`.recent-job[data-job="${end?.id}"] details.log summary`);
      await page.waitForFunction(logShows(end?.id ?? '', 'RESULT: FAILED'), { timeout: 10_000 });
      const status = String(await page.evaluate("fetch('/status.json').then((r) => r.text())"));
      const log = String(await page.evaluate(`fetch('/jobs/${end?.id ?? ''}/log').then((r) => r.text())`));
      const statusFile = await readFile(join(world.dir, 'run', 'status.json'), 'utf8');
      expect(JSON.parse(statusFile)).toMatchObject({
        format: 1,
        jobs: [{ id: end?.id, banner: 'FAILED', result: 'FAILED' }],
      });
      for (const [what, bytes] of [
        ['page', await page.content()],
        ['status.json', status],
        ['log', log],
        ['status file', statusFile],
      ] as const) {
        expect([what, bytes.includes(WRONG_PASSWORD), bytes.includes(sim.password)]).toEqual([what, false, false]);
      }
      expect(log).toContain(`RESULT: FAILED  mp1: failed, wrong user name or password  [${end?.id}]`);
      await page.close();
    },
  );
});
