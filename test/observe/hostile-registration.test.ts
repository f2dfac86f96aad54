import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BRANCH_TOKEN, RIG_TOKEN, startServiceRig, type ServiceRig } from '../simulator/service-rig.js';
import { freePort, removeState, startObserve, stateText, type ObserveRun } from './observe-rig.js';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A careless operator and a failing service around the registration: a damaged pending file, two
 * receivers on one state folder, a port already taken, --unregister after the configuration is
 * gone, a 500 while configurations are being posted back. The caller's other configurations and
 * another user's survive byte for byte; the token and the URL's secret segment are never shown.
 */

const ALERTS = 'http://127.0.0.1:9/hooks/netteam-7f3c2a9e1b';
const SEGMENT = '0123456789abcdef0123456789abcdef';
let rig: ServiceRig;
const dirs: string[] = [];
const runs: ObserveRun[] = [];

beforeAll(async () => {
  rig = await startServiceRig();
});
afterAll(async () => {
  for (const run of runs) await run.stop().catch(() => undefined);
  await rig?.close();
  for (const dir of dirs) await removeState(dir);
});
beforeEach(async () => {
  for (const token of [RIG_TOKEN, BRANCH_TOKEN]) await rig.call('DELETE', '/api/v3/observer', { token });
  await rig.call('POST', '/api/v3/observer', { body: { url: ALERTS, webAlertEvents: true } });
  await rig.call('POST', '/api/v3/observer', {
    body: { url: 'http://127.0.0.1:9/ev/q1', testEvents: true },
    token: BRANCH_TOKEN,
  });
});

const stateDir = async (): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'mpprov-observe-hostile-reg-'));
  dirs.push(dir);
  await writeFile(join(dir, 'observe-path'), `${SEGMENT}\n`);
  return dir;
};
const observe = async (options: Parameters<typeof startObserve>[1]): Promise<ObserveRun> => {
  const run = await startObserve(rig, options);
  runs.push(run);
  return run;
};
const everyone = async () => ({
  mine: (await rig.get('/api/v3/observer')).text,
  branch: (await rig.get('/api/v3/observer', BRANCH_TOKEN)).text,
});
const until = async (check: () => Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 50));
  expect(await check()).toBe(true);
};
const registered = async (): Promise<boolean> =>
  ((await rig.get('/api/v3/observer')).json as { url: string }[]).some(
    (o) => o.url.endsWith(SEGMENT) && !(o as { blacklisted?: boolean }).blacklisted,
  );

describe('mpprov observe and a careless operator', () => {
  it('stops, loudly and sending nothing, on a damaged pending file instead of writing over it', async () => {
    const dir = await stateDir();
    await writeFile(join(dir, 'observers-pending.json'), '[{"url":"http://127.0.0.1:9/hooks/lost","seqEv');
    const before = await everyone();
    rig.service.clearRequests();
    const port = await freePort();
    const run = await observe({ listenPort: port, publicPort: port, stateDir: dir, checkS: 60 });
    await expect(run.done).rejects.toMatchObject({ code: 'MPPROV_STATE_FILE_REFUSED' });
    expect(await readFile(join(dir, 'observers-pending.json'), 'utf8')).toContain('hooks/lost');
    expect(await everyone()).toEqual(before);
    // Only this test's own reads reached the service: no DELETE, no POST.
    expect(Object.keys(rig.service.requestCounts())).toEqual(['observer-list']);
  });

  it('refuses a second receiver on the same state folder in one sentence, the first one untouched', async () => {
    const dir = await stateDir();
    const port = await freePort();
    const first = await observe({ listenPort: port, publicPort: port, stateDir: dir, checkS: 60 });
    await until(registered);
    const before = await everyone();
    const second = await observe({ listenPort: port, publicPort: port, stateDir: dir, checkS: 60 });
    await expect(second.done).rejects.toMatchObject({
      code: 'MPPROV_OBSERVE_BUSY',
      message: `another mpprov observe (pid ${process.pid}) uses ${dir}: stop it first (systemctl stop mpprov-observe)`,
    });
    const gone = await observe({ listenPort: port, publicPort: port, stateDir: dir, unregister: true });
    await expect(gone.done).rejects.toMatchObject({ code: 'MPPROV_OBSERVE_BUSY' });
    expect(await everyone()).toEqual(before);
    expect(await first.stop()).toBe(0);
  });

  it('says in a sentence, not a stack, that the listening port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const run = await observe({ listenPort: port, publicPort: port, stateDir: await stateDir(), checkS: 60 });
      await expect(run.done).rejects.toMatchObject({
        code: 'MPPROV_OBSERVE_LISTEN',
        message: `cannot listen on 127.0.0.1:${port} (EADDRINUSE)`,
      });
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('--unregister when its configuration is already gone changes nothing and no longer says registered', async () => {
    const dir = await stateDir();
    const port = await freePort();
    const run = await observe({ listenPort: port, publicPort: port, stateDir: dir, checkS: 60 });
    await until(registered);
    expect(await run.stop()).toBe(0);
    // Someone removed it at the service meanwhile (another tool's read-all/delete/post-back).
    await rig.call('DELETE', '/api/v3/observer');
    await rig.call('POST', '/api/v3/observer', { body: { url: ALERTS, webAlertEvents: true } });
    const before = await everyone();
    const gone = await observe({ listenPort: port, publicPort: port, stateDir: dir, unregister: true });
    expect(await gone.done).toBe(0);
    expect(gone.said).toEqual([`http://127.0.0.1:${port}/mpprov-events/ is not registered: nothing to remove`]);
    expect(await everyone()).toEqual(before);
    const status = JSON.parse(await readFile(join(dir, 'observe-status.json'), 'utf8')) as { registered: boolean };
    expect(status.registered).toBe(false);
  });

  it('after a crash between DELETE and the re-posts, a 500 on the way back is retried, every configuration back byte for byte', async () => {
    const dir = await stateDir();
    const port = await freePort();
    const own = `http://127.0.0.1:${port}/mpprov-events/${SEGMENT}`;
    const before = await everyone();
    const kept = ((await rig.get('/api/v3/observer')).json as object[]).concat([
      { url: own, seqEvents: true, sqaEvents: true, blacklisted: true },
    ]);
    // What a receiver killed right after its DELETE leaves: the pending file, and nothing at the service.
    await writeFile(join(dir, 'observers-pending.json'), `${JSON.stringify(kept)}\n`);
    await rig.call('DELETE', '/api/v3/observer');
    rig.service.setFaults({ error: { name: 'internal', count: 1 } });
    const run = await observe({ listenPort: port, publicPort: port, stateDir: dir, checkS: 60 });
    // No request of this test until then: the one 500 is the receiver's first POST back.
    await until(() => Promise.resolve(run.loud.length > 0));
    await until(registered);
    const mine = (await rig.get('/api/v3/observer')).json as { url: string }[];
    expect(JSON.stringify(mine.filter((o) => o.url === ALERTS))).toBe(before.mine);
    expect((await rig.get('/api/v3/observer', BRANCH_TOKEN)).text).toBe(before.branch);
    expect(run.loud.length).toBeGreaterThan(0);
    expect(run.loud[0]).toContain('is NOT at the service yet');
    for (const line of [...run.said, ...run.loud]) {
      expect(line).not.toContain(SEGMENT);
      expect(line).not.toContain(RIG_TOKEN);
    }
    expect(await stateText(dir)).not.toContain(RIG_TOKEN);
    expect(await run.stop()).toBe(0);
  });

  it('names its own URL in a retry sentence without the secret segment', async () => {
    const dir = await stateDir();
    const port = await freePort();
    const own = `http://127.0.0.1:${port}/mpprov-events/${SEGMENT}`;
    await writeFile(join(dir, 'observers-pending.json'), `${JSON.stringify([{ url: own, seqEvents: true }])}\n`);
    rig.service.setFaults({ error: { name: 'internal', count: 1 } });
    const run = await observe({ listenPort: port, publicPort: port, stateDir: dir, checkS: 60 });
    await until(() => Promise.resolve(run.loud.length > 0));
    expect(run.loud[0]).toMatch(
      new RegExp(`^the configuration for http://127\\.0\\.0\\.1:${port}/mpprov-events/… is NOT at the service yet`),
    );
    await until(registered);
    for (const line of [...run.said, ...run.loud]) expect(line).not.toContain(SEGMENT);
    expect(await run.stop()).toBe(0);
  });

  it('deletes nothing when GET /v3/observer lists what no caller can hold (a kind on two servers)', async () => {
    const dir = await stateDir();
    const port = await freePort();
    const before = await everyone();
    const garbage = [
      { url: ALERTS, webAlertEvents: true, blacklisted: false },
      { url: 'http://127.0.0.1:9/hooks/someone-else', webAlertEvents: true, blacklisted: false },
      { url: `http://127.0.0.1:${port}/mpprov-events/${SEGMENT}`, seqEvents: true, sqaEvents: true, blacklisted: true },
    ];
    rig.service.clearRequests();
    rig.service.setFaults({ rawBody: { text: JSON.stringify(garbage), contentType: 'application/json', count: 1 } });
    const run = await observe({ listenPort: port, publicPort: port, stateDir: dir, checkS: 60 });
    await expect(run.done).rejects.toMatchObject({
      code: 'MPPROV_SERVICE_RESPONSE',
      message:
        'GET /v3/observer listed webAlertEvents for two servers, which the service never holds for one caller: nothing deleted',
    });
    expect(rig.service.requestCounts()).toEqual({ 'observer-list': 1 });
    expect(await everyone()).toEqual(before);
  });

  it('stops in a sentence on a GET /v3/observer answer that is garbage or huge, having deleted nothing', async () => {
    const before = await everyone();
    const faults = [
      { fault: { rawBody: { text: '<html>proxy says hi</html>', contentType: 'text/html', count: 1 } } },
      { fault: { rawBody: { text: '[{"url":42}]', contentType: 'application/json', count: 1 } } },
      { fault: { oversizedBody: { bytes: 64 * 1024 * 1024, count: 1 } } },
    ];
    for (const { fault } of faults) {
      rig.service.clearRequests();
      rig.service.setFaults(fault);
      const port = await freePort();
      const run = await observe({ listenPort: port, publicPort: port, stateDir: await stateDir(), checkS: 60 });
      const error = (await run.done.then(
        () => undefined,
        (e: unknown) => e,
      )) as { code?: string; message?: string } | undefined;
      expect(error?.code).toMatch(/^MPPROV_SERVICE_/);
      expect(rig.service.requestCounts()).toEqual({ 'observer-list': 1 });
      rig.service.clearFaults();
    }
    expect(await everyone()).toEqual(before);
  });

  it('registers beside another user who receives the same kinds, and leaves that user alone', async () => {
    await rig.call('POST', '/api/v3/observer', {
      body: { url: 'http://127.0.0.1:9/ev/branch-seq', seqEvents: true, sqaEvents: true },
      token: BRANCH_TOKEN,
    });
    const branchBefore = (await rig.get('/api/v3/observer', BRANCH_TOKEN)).text;
    const port = await freePort();
    const run = await observe({ listenPort: port, publicPort: port, stateDir: await stateDir(), checkS: 60 });
    await until(registered);
    expect(run.said.some((l) => l.includes('already goes to'))).toBe(false);
    expect((await rig.get('/api/v3/observer', BRANCH_TOKEN)).text).toBe(branchBefore);
    expect(await run.stop()).toBe(0);
  });
});
