import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from '../../src/observe/index.js';
import { RIG_TOKEN, startServiceRig, type ServiceRig } from '../simulator/service-rig.js';
import { freePort, startObserve, stateText, type ObserveRun } from './observe-rig.js';

/**
 * Hostile requests to a running receiver: huge, not JSON, not an event, control characters, the
 * wrong path, the wrong method. None crashes it, none reaches a printed line raw.
 */

let rig: ServiceRig;
let run: ObserveRun;
let base: string;
let eventsUrl: string;
let stateDir: string;

beforeAll(async () => {
  rig = await startServiceRig();
  await rig.call('DELETE', '/api/v3/observer');
  stateDir = await mkdtemp(join(tmpdir(), 'mpprov-observe-hostile-'));
  const port = await freePort();
  run = await startObserve(rig, { listenPort: port, publicPort: port, stateDir, checkS: 60 });
  base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100 && eventsUrl === undefined; i++) {
    const own = ((await rig.get('/api/v3/observer')).json as { url: string }[])[0];
    if (own !== undefined) eventsUrl = own.url;
    else await new Promise((r) => setTimeout(r, 50));
  }
  expect(eventsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mpprov-events\/[0-9a-f]{32}$/);
});
afterAll(async () => {
  await run?.stop();
  await rig?.close();
  await rm(stateDir, { recursive: true, force: true });
});

const post = async (url: string, body: string | Buffer, method: 'POST' | 'GET' = 'POST') => {
  const answer = await request(url, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(method === 'POST' ? { body } : {}),
  });
  await answer.body.dump();
  return answer.statusCode;
};

const hasControl = (text: string): boolean => [...text].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

describe('the events receiver and hostile requests', () => {
  it('answers 404 off its path, 405 for another method, 413 past the cap, 400 for what is not an event', async () => {
    const event = JSON.stringify({ type: 'SEQUENCER_EVENT', sequencerName: 'mp1', sequencerStatus: 'AVAILABLE' });
    expect(await post(`${base}/mpprov-events/`, event)).toBe(404);
    expect(await post(`${base}/mpprov-events/${'0'.repeat(32)}`, event)).toBe(404);
    expect(await post(eventsUrl, '', 'GET')).toBe(405);
    expect(await post(eventsUrl, Buffer.alloc(2 * 1024 * 1024, 0x41))).toBe(413);
    expect(await post(eventsUrl, 'not json at all')).toBe(400);
    expect(await post(eventsUrl, '[1,2,3]')).toBe(400);
    expect(await post(eventsUrl, JSON.stringify({ sequencerName: 'no type' }))).toBe(400);
    expect(await readEvents(stateDir)).toEqual([]);
  });

  it('keeps unknown kinds and fields and control characters as data, never printed raw', async () => {
    const hostile = {
      type: 'FUTURE_EVENT',
      sequencerName: 'mp\u001b[2J\u0007evil\r\nRESULT ok',
      brandNew: { nested: [1, 2] },
    };
    expect(await post(eventsUrl, JSON.stringify(hostile))).toBe(204);
    for (let i = 0; i < 100 && (await readEvents(stateDir)).length === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    const logged = await readEvents(stateDir);
    expect(logged.map((l) => l.event)).toEqual([hostile]);
    // The file holds JSON: the control characters are escapes there, not raw bytes.
    const text = await stateText(stateDir);
    expect(hasControl(text.replaceAll('\n', ''))).toBe(false);
    expect(text).not.toContain(RIG_TOKEN);
    expect(run.said.length).toBeGreaterThan(0);
    for (const line of [...run.said, ...run.loud]) {
      expect(hasControl(line)).toBe(false);
      expect(line).not.toContain(RIG_TOKEN);
    }
  });

  it('writes an event to events.jsonl as it was received, field for field and in its order', async () => {
    // The documented order: the common fields, then the kind's own.
    const sent = JSON.stringify({
      type: 'SEQUENCER_EVENT',
      description: 'Monitoring Point mp-source is AVAILABLE',
      eventTime: 1_795_894_684,
      sequencerName: 'mp-source',
      sequencerHost: 'mp-source.branch.example',
      orgId: 12,
      orgName: 'Branch Networks',
      sequencerStatus: 'AVAILABLE',
    });
    expect(await post(eventsUrl, sent)).toBe(204);
    const lineOf = async () =>
      (await stateText(stateDir)).split('\n').find((line) => line.includes('"mp-source"')) ?? '';
    for (let i = 0; i < 100 && (await lineOf()) === ''; i++) await new Promise((r) => setTimeout(r, 20));
    const line = JSON.parse(await lineOf()) as { received: string; event: unknown };
    expect(JSON.stringify(line.event)).toBe(sent);
    expect(new Date(line.received).toISOString()).toBe(line.received);
  });

  it('takes an event whose fields have unforeseen types (204, kept as sent), reading those fields as missing', async () => {
    // Refused, ten of them would have the service blacklist the receiver.
    const sent = JSON.stringify({
      type: 'SEQUENCER_EVENT',
      description: null,
      eventTime: '1795894684',
      sequencerName: 'mp-typed',
      sequencerHost: 7,
      orgId: '12',
      sequencerStatus: 'AVAILABLE',
    });
    expect(await post(eventsUrl, sent)).toBe(204);
    const lineOf = async () =>
      (await stateText(stateDir)).split('\n').find((line) => line.includes('"mp-typed"')) ?? '';
    for (let i = 0; i < 100 && (await lineOf()) === ''; i++) await new Promise((r) => setTimeout(r, 20));
    expect(JSON.stringify((JSON.parse(await lineOf()) as { event: unknown }).event)).toBe(sent);
    const logged = (await readEvents(stateDir)).find((l) => l.event.sequencerName === 'mp-typed');
    expect(logged?.event).toMatchObject({ type: 'SEQUENCER_EVENT', sequencerStatus: 'AVAILABLE' });
    expect([logged?.event.description, logged?.event.orgId, logged?.event.sequencerHost]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});
