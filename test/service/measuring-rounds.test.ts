import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DataApi } from '../../src/service/data-api-client.js';
import type { PathData, PathStatus } from '../../src/service/data-api-model.js';
import { createMeasuringRounds, type MeasuringResult } from '../../src/service/measuring-rounds.js';
import { createWatchState } from '../../src/service/watch-state.js';

/**
 * When the measuring rounds look, on a fake clock: which round confirms a path is a question of
 * the schedule alone, and on a real clock it could only be told by timing the rounds. The client
 * is a stub for the same reason: the simulated service (test/service/paths.test.ts) answers the
 * same questions over HTTPS, but not at instants a test can name.
 */

const TIMING = { roundMs: 2_000, minGapMs: 250, lastAnswerGraceMs: 1_000 };
/** 40 paths waiting space the regular rounds 40 x 400 ms apart. */
const PATHS = 40;
const SPACED_MS = PATHS * 400;
/** The stub service's first data for every path: 3 s after the test starts. */
const FIRST_DATA_MS = 3_000;

let start: number;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  start = Date.now();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A data API that answers path data (an element once FIRST_DATA_MS passed) and statuses, noting when it was asked. */
function stubService() {
  const dataAskedAt: number[] = [];
  const client: Partial<DataApi> = {
    listPathData: (query) => {
      dataAskedAt.push(Date.now() - start);
      const elements = Date.now() - start >= FIRST_DATA_MS ? [{ time: Math.floor(Date.now() / 1000), value: 1 }] : [];
      return Promise.resolve(
        query.pathIds.map((pathId): PathData => ({
          pathId,
          data: { latency: elements },
          dataInbound: null,
          dataOutbound: null,
        })),
      );
    },
    listPathStatuses: () =>
      Promise.resolve(
        Array.from({ length: PATHS }, (_, i): PathStatus => ({ pathId: i + 1, status: 'SQA_NOT_VIOLATED' })),
      ),
  };
  return { dataAskedAt, state: createWatchState(client as DataApi, undefined) };
}

function waitAll(rounds: ReturnType<typeof createMeasuringRounds>): MeasuringResult[] {
  const results: MeasuringResult[] = [];
  for (let id = 1; id <= PATHS; id++)
    void rounds
      .wait({ orgId: 12, id, since: start - 1_000, deadline: start + 600_000 })
      .then((result) => results.push(result));
  return results;
}

describe('measuring rounds', () => {
  it('once no path is on its way, the newest are looked at one round after they joined, then at doubling gaps', async () => {
    const { dataAskedAt, state } = stubService();
    const rounds = createMeasuringRounds(state, TIMING);
    const arrivals = Array.from({ length: PATHS }, () => rounds.expect());
    for (const arrived of arrivals) arrived();
    const results = waitAll(rounds);
    await vi.advanceTimersByTimeAsync(SPACED_MS);
    // At once (the first round), one round's time later (before the first data), twice that (it measures).
    expect(dataAskedAt).toEqual([0, TIMING.roundMs, 2 * TIMING.roundMs]);
    expect(results).toHaveLength(PATHS);
    expect(results.every((r) => r.measuring && r.status === 'SQA_NOT_VIOLATED')).toBe(true);
  });

  it('while a path is on its way, rounds keep the spacing of many waiting paths', async () => {
    const { dataAskedAt, state } = stubService();
    const rounds = createMeasuringRounds(state, TIMING);
    const onItsWay = rounds.expect();
    const results = waitAll(rounds);
    await vi.advanceTimersByTimeAsync(SPACED_MS - 1);
    expect(dataAskedAt).toEqual([0]);
    expect(results).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(dataAskedAt).toEqual([0, SPACED_MS]);
    expect(results).toHaveLength(PATHS);
    onItsWay();
  });

  it('while an MP is still waited for, its paths may come: the spacing holds too', async () => {
    const { dataAskedAt, state } = stubService();
    const rounds = createMeasuringRounds(state, TIMING, () => true);
    const results = waitAll(rounds);
    await vi.advanceTimersByTimeAsync(SPACED_MS);
    expect(dataAskedAt).toEqual([0, SPACED_MS]);
    expect(results).toHaveLength(PATHS);
  });
});
