import { appendFile, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckAlarm } from '../../src/observe/check-alarm.js';
import { createMissedEventJudge } from '../../src/observe/missed-events.js';
import {
  appendPollConfirmation,
  CONFIRMATIONS_FILE,
  followPollConfirmations,
  type PollConfirmation,
} from '../../src/observe/poll-confirmations.js';
import { watchWithEvents } from '../../src/observe/index.js';
import { createServiceWatch } from '../../src/service/index.js';
import { startServiceRig, type ServiceRig } from '../simulator/service-rig.js';
import { productApi, removeState } from './observe-rig.js';

/**
 * Blacklisting noticed from silence: a run's poll round confirms an MP back that no event
 * announced; the run says so in poll-confirmations.jsonl, the receiver judges after a grace and
 * rings for an early registration check (at most once per gap).
 */

const until = async (done: () => boolean | Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 400 && !(await done()); i++) await new Promise((r) => setTimeout(r, 25));
  expect(await done()).toBe(true);
};
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the missed-event judge', () => {
  it('calls an MP missed only when no AVAILABLE event for it came after it was seen down, within the grace', async () => {
    const missed: string[] = [];
    const judge = createMissedEventJudge({ graceMs: 100, onMissed: (h) => missed.push(h) });
    const down = Date.now();
    judge.available(['OLD-MP'], down - 1);
    judge.available(['mp-evented'], down + 1);
    judge.confirmed({ hostname: 'MP-EVENTED', downSeenAt: down, confirmedAt: Date.now() });
    judge.confirmed({ hostname: 'mp-silent', downSeenAt: down, confirmedAt: Date.now() });
    judge.confirmed({ hostname: 'old-mp', downSeenAt: down, confirmedAt: Date.now() });
    judge.confirmed({ hostname: 'mp-late', downSeenAt: down, confirmedAt: Date.now() });
    // The event may trail the confirming round: within the grace it still counts.
    judge.available(['mp-late']);
    await until(() => missed.length === 2);
    await settle(150);
    expect(missed.sort()).toEqual(['mp-silent', 'old-mp']);
    judge.close();
  });
});

describe('the check alarm', () => {
  it('cuts a pause short when rung, and rings early at most once per gap', async () => {
    const alarm = createCheckAlarm(300);
    // Rung with no pause running: the next pause ends at once.
    expect(alarm.ring()).toBe(true);
    expect(alarm.ring()).toBe(false);
    await alarm.sleep(3_600_000);
    // Within the gap: deferred to its end, and only one is kept.
    expect(alarm.ring()).toBe(true);
    expect(alarm.ring()).toBe(false);
    let woke = false;
    const pause = alarm.sleep(3_600_000).then(() => (woke = true));
    await until(() => woke);
    await pause;
    const stop = new AbortController();
    const aborted = alarm.sleep(3_600_000, stop.signal);
    stop.abort();
    await aborted;
    alarm.close();
  });
});

describe('poll-confirmations.jsonl', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-confirmations-'));
  });
  afterAll(() => removeState(dir));

  it('is followed from its end, skips what is not a confirmation, and is rotated past its size', async () => {
    const file = join(dir, CONFIRMATIONS_FILE);
    await writeFile(file, `${JSON.stringify({ hostname: 'before-start', downSeenAt: 1, confirmedAt: 2 })}\n`);
    const seen: PollConfirmation[] = [];
    const stop = followPollConfirmations(dir, (c) => seen.push(c), 20);
    await settle(60);
    await appendFile(
      file,
      `not json\n{"hostname":"\\u001b[2J","downSeenAt":"x","confirmedAt":3}\n${'z'.repeat(300_000)}\n`,
    );
    await appendPollConfirmation(dir, { hostname: 'mp-1', downSeenAt: 10, confirmedAt: 20 }, 1_000_000);
    await until(() => seen.length === 1);
    expect(seen).toEqual([{ hostname: 'mp-1', downSeenAt: 10, confirmedAt: 20 }]);
    // Past the cap the file becomes .1 and a new one starts; the follower reads the new one whole.
    await appendPollConfirmation(dir, { hostname: 'mp-2', downSeenAt: 30, confirmedAt: 40 }, 100);
    expect((await stat(`${file}.1`)).size).toBeGreaterThan(100);
    await until(() => seen.length === 2);
    expect(seen[1]).toEqual({ hostname: 'mp-2', downSeenAt: 30, confirmedAt: 40 });
    expect(await readFile(file, 'utf8')).toBe('{"hostname":"mp-2","downSeenAt":30,"confirmedAt":40}\n');
    stop();
  });
});

describe('a watch with events', () => {
  let rig: ServiceRig;
  let dir: string;
  beforeAll(async () => {
    rig = await startServiceRig();
    dir = await mkdtemp(join(tmpdir(), 'mpprov-watch-events-'));
  });
  afterAll(async () => {
    await rig?.close();
    await removeState(dir);
  });

  it('writes a confirmation for an MP a poll round confirmed back without its event, none when the event came or it was never seen down', async () => {
    for (const h of ['wm-silent', 'wm-evented'])
      rig.service.registerAppliance({ hostname: h, orgId: 12, connectionStatus: 'UNAVAILABLE' });
    rig.service.registerAppliance({ hostname: 'wm-up', orgId: 12, connectionStatus: 'AVAILABLE' });
    const api = productApi(rig);
    // Regular rounds 2 s apart: the first finds both down, the event's hinted round confirms one,
    // the next regular round the other.
    const following = watchWithEvents(dir, createServiceWatch(api, { orgId: 12, timing: { roundMs: 2_000 } }), 20);
    const { watch } = following;
    try {
      const statuses: string[] = [];
      const waits = ['wm-silent', 'wm-evented'].map((h) =>
        watch.waitConnected(h, { waitS: 30, onProgress: (p) => statuses.push(`${h} ${p.status ?? '-'}`) }),
      );
      await until(() => statuses.length >= 2);
      expect(statuses.sort()).toEqual(['wm-evented UNAVAILABLE', 'wm-silent UNAVAILABLE']);
      rig.service.setConnectionStatus('wm-evented', 'AVAILABLE');
      const event = { type: 'SEQUENCER_EVENT', sequencerName: 'wm-evented', sequencerStatus: 'AVAILABLE' };
      await appendFile(join(dir, 'events.jsonl'), `${JSON.stringify({ received: new Date().toISOString(), event })}\n`);
      expect(await waits[1]).toMatchObject({ kind: 'connected' });
      rig.service.setConnectionStatus('wm-silent', 'AVAILABLE');
      expect((await Promise.all(waits)).map((o) => o.kind)).toEqual(['connected', 'connected']);
      expect((await watch.waitConnected('wm-up', { waitS: 30 })).kind).toBe('connected');
      const lines = (await readFile(join(dir, CONFIRMATIONS_FILE), 'utf8')).trim().split('\n');
      expect(lines).toHaveLength(1);
      const confirmation = JSON.parse(lines[0] ?? '') as PollConfirmation;
      expect(confirmation.hostname).toBe('wm-silent');
      expect(confirmation.confirmedAt).toBeGreaterThanOrEqual(confirmation.downSeenAt);
    } finally {
      following.stop();
      await api.close();
    }
  });
});
