import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readEvents } from '../../src/observe/index.js';
import { planRegistration } from '../../src/observe/registration-plan.js';
import { BRANCH_TOKEN, RIG_TOKEN, startServiceRig, type ServiceRig } from '../simulator/service-rig.js';
import { freePort, removeState, startObserve, startRelay, stateText } from './observe-rig.js';

/**
 * `mpprov observe`'s registration against the simulated service over real HTTPS: another user's
 * and the same user's other configurations survive every step byte for byte as GET shows them.
 */

// Loopback ports nothing listens on: the service may try them, and nothing beyond loopback is reached.
const ALERTS = 'http://127.0.0.1:9/hooks/netteam-7f3c2a9e1b';
const BRANCH = 'http://127.0.0.1:9/ev/q1';
let rig: ServiceRig;
const dirs: string[] = [];

beforeAll(async () => {
  rig = await startServiceRig();
  rig.service.registerAppliance({ hostname: 'obs-mp-1', orgId: 12 });
});
afterAll(async () => {
  await rig?.close();
  for (const dir of dirs) await removeState(dir);
});
beforeEach(async () => {
  for (const token of [RIG_TOKEN, BRANCH_TOKEN]) await rig.call('DELETE', '/api/v3/observer', { token });
  // The same user's alerting integration, and another user's receiver of the same kinds.
  expect((await rig.call('POST', '/api/v3/observer', { body: { url: ALERTS, webAlertEvents: true } })).status).toBe(
    200,
  );
  // Kinds the simulated fleet never sends: its blacklisting is not what these tests watch.
  const branch = { url: BRANCH, testEvents: true, networkChangeEvents: true };
  expect((await rig.call('POST', '/api/v3/observer', { body: branch, token: BRANCH_TOKEN })).status).toBe(200);
});

const mine = async () => (await rig.get('/api/v3/observer')).json as { url: string; blacklisted: boolean }[];
const othersText = async () => ({
  branch: (await rig.get('/api/v3/observer', BRANCH_TOKEN)).text,
  alerts: JSON.stringify(
    ((await rig.get('/api/v3/observer')).json as { url: string }[]).filter((o) => o.url === ALERTS),
  ),
});
const until = async (check: () => Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 50));
  expect(await check()).toBe(true);
};

describe('mpprov observe against the simulated service', () => {
  it('registers for seqEvents and sqaEvents, keeps the others byte for byte, and unregisters only itself', async () => {
    const before = await othersText();
    const port = await freePort();
    const run = await startObserve(rig, { listenPort: port, publicPort: port });
    dirs.push(run.stateDir);
    await until(async () => (await mine()).length === 2);
    const own = (await mine()).find((o) => o.url !== ALERTS);
    expect(own).toMatchObject({ seqEvents: true, sqaEvents: true, blacklisted: false });
    expect(own?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mpprov-events\/[0-9a-f]{32}$/);
    expect(await othersText()).toEqual(before);

    // An event reaches events.jsonl.
    rig.service.setConnectionStatus('obs-mp-1', 'UNAVAILABLE');
    rig.service.setConnectionStatus('obs-mp-1', 'AVAILABLE');
    await until(async () => (await readEvents(run.stateDir)).length === 2);
    expect((await readEvents(run.stateDir)).map((e) => e.event['sequencerStatus'])).toEqual([
      'UNAVAILABLE',
      'AVAILABLE',
    ]);
    expect(await run.stop()).toBe(0);

    const gone = await startObserve(rig, {
      listenPort: port,
      publicPort: port,
      stateDir: run.stateDir,
      unregister: true,
    });
    expect(await gone.done).toBe(0);
    expect((await mine()).map((o) => o.url)).toEqual([ALERTS]);
    expect(await othersText()).toEqual(before);
    expect(await stateText(run.stateDir)).not.toContain(RIG_TOKEN);
    for (const line of [...run.said, ...run.loud, ...gone.said]) expect(line).not.toContain(RIG_TOKEN);
  });

  it('posts every documented flag, and keeps a kind its own URL already had', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'mpprov-observe-flags-'));
    dirs.push(stateDir);
    const segment = 'fedcba9876543210fedcba9876543210';
    await writeFile(join(stateDir, 'observe-path'), `${segment}\n`);
    const port = await freePort();
    const ownUrl = `http://127.0.0.1:${port}/mpprov-events/${segment}`;
    // Registered before for test events only: the POST that adds seqEvents and sqaEvents replaces its flags.
    const earlier = { url: ownUrl, testEvents: true };
    expect((await rig.call('POST', '/api/v3/observer', { body: earlier })).status).toBe(200);
    const before = await othersText();
    const run = await startObserve(rig, { listenPort: port, publicPort: port, stateDir });
    await until(async () => (await mine()).some((o) => o.url === ownUrl && (o as { seqEvents?: boolean }).seqEvents));
    expect((await mine()).find((o) => o.url === ownUrl)).toEqual({
      url: ownUrl,
      testEvents: true,
      seqEvents: true,
      sqaEvents: true,
      webAlertEvents: false,
      networkChangeEvents: false,
      blacklisted: false,
    });
    expect(await othersText()).toEqual(before);
    expect(await run.stop()).toBe(0);

    // The body of a first registration names all five kinds, as the documented Observer does.
    const first = planRegistration([], 'https://prov.example.net/ev/x', []);
    expect(first.postBack).toEqual([
      {
        url: 'https://prov.example.net/ev/x',
        testEvents: false,
        seqEvents: true,
        sqaEvents: true,
        webAlertEvents: false,
        networkChangeEvents: false,
      },
    ]);
  });

  it('refuses in one sentence naming the other server and kind, and changes nothing', async () => {
    await rig.call('DELETE', '/api/v3/observer');
    await rig.call('POST', '/api/v3/observer', { body: { url: ALERTS, webAlertEvents: true, seqEvents: true } });
    const before = (await rig.get('/api/v3/observer')).text;
    const branchBefore = (await rig.get('/api/v3/observer', BRANCH_TOKEN)).text;
    const port = await freePort();
    const run = await startObserve(rig, { listenPort: port, publicPort: port });
    dirs.push(run.stateDir);
    expect(await run.done).toBe(1);
    expect(run.said).toEqual([
      `seqEvents already goes to ${ALERTS}, another server of this user: not registering (--take-over seqEvents moves it here)`,
    ]);
    expect((await rig.get('/api/v3/observer')).text).toBe(before);
    expect((await rig.get('/api/v3/observer', BRANCH_TOKEN)).text).toBe(branchBefore);

    const dry = await startObserve(rig, { listenPort: port, publicPort: port, once: true, takeOver: ['seqEvents'] });
    dirs.push(dry.stateDir);
    expect(await dry.done).toBe(0);
    expect(dry.said.at(-1)).toMatch(
      /^would: taking seqEvents over from http:\/\/127\.0\.0\.1:9\/hooks.*\(dry run: nothing sent\)$/,
    );
    expect((await rig.get('/api/v3/observer')).text).toBe(before);
  });

  it('notices its blacklisting within one check period and repairs it, the others intact', async () => {
    const before = await othersText();
    const port = await freePort();
    const relay = await startRelay(port);
    const run = await startObserve(rig, { listenPort: port, publicPort: relay.port, checkS: 1 });
    dirs.push(run.stateDir);
    await until(async () => (await mine()).length === 2);
    await relay.cut();
    for (let i = 0; i < 5; i++) {
      rig.service.setConnectionStatus('obs-mp-1', 'UNAVAILABLE');
      rig.service.setConnectionStatus('obs-mp-1', 'AVAILABLE');
    }
    await rig.service.eventsSettled();
    await relay.mend();
    // Blacklisted now, or already repaired by a check that came first: either way it must come back.
    await until(async () => {
      const own = (await mine()).find((o) => o.url !== ALERTS);
      return own !== undefined && !own.blacklisted && run.loud.some((l) => l.includes('blacklisted'));
    });
    expect(run.loud.find((l) => l.includes('blacklisted'))).toBe(
      `the service blacklisted http://127.0.0.1:${relay.port}/mpprov-events/: repairing`,
    );
    expect(await othersText()).toEqual(before);
    rig.service.setConnectionStatus('obs-mp-1', 'UNAVAILABLE');
    await until(async () => (await readEvents(run.stateDir)).some((e) => e.event['sequencerStatus'] === 'UNAVAILABLE'));
    expect(await run.stop()).toBe(0);
    await relay.cut();
    expect(await stateText(run.stateDir)).not.toContain(RIG_TOKEN);
  });
});
