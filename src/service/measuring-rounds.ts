import { holdsData, lastDataTime, type PathData, type PathStatus } from './data-api-model.js';
import { failureText } from './failure-kind.js';
import { roundDue } from './round-due.js';
import type { WatchState } from './watch-state.js';

/**
 * Whether paths measure, for every path a watch waits on, in rounds (docs/service-model.md,
 * "Paths"): each round asks, per organization, `GET /v3/path/data?orgId=&pathIds=...&from=` for
 * all of them (split so that no request exceeds 20 path-days or PATHS_PER_DATA_REQUEST paths),
 * then, when a wait ends in it, `GET /v3/path/status?orgId=` once for the statuses to say.
 * A path measures when its data holds an element since its `since`; only the last
 * MEASURE_WINDOW_MS are asked for (a path that measured once and stopped does not measure).
 * While more paths are on their way (being found or created, or their MP still waited for), rounds
 * come further apart the more paths wait (each round costs the same whatever it answers, and the
 * paths still to come join the next one). Once none is on its way, the newest paths' first data is
 * all that is waited for: rounds follow the newest path's joining by one round's time, then by
 * doubling gaps, never later than that spacing. One is due at each wait's deadline: its last look.
 */

const PATHS_PER_DATA_REQUEST = 100;
const PATH_DAYS_PER_REQUEST = 20;
const DAY_MS = 86_400_000;
const MEASURE_WINDOW_MS = 120_000;
/** Round spacing grows by this per path waiting, up to MAX_ROUND_MS. */
const MS_PER_WAITING_PATH = 400;
const MAX_ROUND_MS = 30_000;

export interface MeasuringResult {
  measuring: boolean;
  status?: string | undefined;
  /** Epoch ms of the newest element seen. */
  lastDataAt?: number | undefined;
  /** Why the last look failed, when it did. */
  failure?: string | undefined;
}

export interface MeasuringRounds {
  /** Resolves when the path measures, or at its deadline (epoch ms) with what was last seen. */
  wait(path: {
    orgId: number;
    id: number;
    since: number;
    deadline: number;
    signal?: AbortSignal | undefined;
  }): Promise<MeasuringResult>;
  /**
   * A path is on its way (being found or created): until the returned function is called (before
   * its wait, or when it will not come), rounds keep the spacing of a watch that more paths join.
   */
  expect(): () => void;
}

interface PathWaiter {
  orgId: number;
  id: number;
  since: number;
  deadline: number;
  lastSentAt: number;
  result: MeasuringResult;
  finish(): void;
}

export function createMeasuringRounds(
  state: WatchState,
  timing: { roundMs: number; minGapMs: number; lastAnswerGraceMs: number },
  /** Whether MPs are still waited for whose paths may join (the watch's connection rounds). */
  mpsWaited: () => boolean = () => false,
): MeasuringRounds {
  const waiters = new Set<PathWaiter>();
  /** Requests of the running round, each with its members: aborted once none of them waits. */
  const flying = new Set<{ members: readonly PathWaiter[]; controller: AbortController }>();
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let lastRoundAt = -Infinity;
  /** Paths being found or created, whose waits are still to join. */
  let onTheirWay = 0;
  let newestJoinAt = -Infinity;

  const spacing = () => Math.min(MAX_ROUND_MS, Math.max(timing.roundMs, waiters.size * MS_PER_WAITING_PATH));

  function regularAt(): number {
    const spaced = lastRoundAt + spacing();
    if (onTheirWay > 0 || mpsWaited()) return spaced;
    // Without this, the last paths created (the whole tail of a fleet whose creations the rate
    // limit spreads out) waited up to MAX_ROUND_MS past their first data for a round.
    let gap = Math.max(1, timing.roundMs);
    while (newestJoinAt + gap <= lastRoundAt) gap *= 2;
    return Math.min(spaced, newestJoinAt + gap);
  }

  function schedule(): void {
    clearTimeout(timer);
    timer = undefined;
    if (running || waiters.size === 0) return;
    const now = Date.now();
    const due = roundDue(regularAt(), waiters, Math.max(lastRoundAt + timing.minGapMs, now));
    timer = setTimeout(() => void runRound(), due - now);
  }

  async function runRound(): Promise<void> {
    timer = undefined;
    running = true;
    lastRoundAt = Date.now();
    try {
      const byOrg = new Map<number, PathWaiter[]>();
      for (const waiter of waiters) byOrg.set(waiter.orgId, [...(byOrg.get(waiter.orgId) ?? []), waiter]);
      await Promise.all([...byOrg].map(([orgId, members]) => roundOf(orgId, members)));
    } finally {
      running = false;
      schedule();
    }
  }

  async function roundOf(orgId: number, members: PathWaiter[]): Promise<void> {
    // A service that trickles its answer would hold the round (and every path waiting after it)
    // up to the request's own deadline: once its members' waits ended, nobody needs the answer.
    const flight = { members, controller: new AbortController() };
    flying.add(flight);
    try {
      await lookRound(orgId, members, flight.controller.signal);
    } finally {
      flying.delete(flight);
    }
  }

  async function lookRound(orgId: number, members: PathWaiter[], signal: AbortSignal): Promise<void> {
    const sentAt = Date.now();
    for (const member of members) member.lastSentAt = sentAt;
    await Promise.all(chunks(members, sentAt).map((chunk) => lookAt(orgId, chunk, signal)));
    const now = Date.now();
    const ending = members.filter((m) => waiters.has(m) && (m.result.measuring || now >= m.deadline));
    if (ending.length === 0) return;
    const statuses = await state.client
      .listPathStatuses(orgId, { priority: 'high', signal })
      .catch(() => [] as PathStatus[]);
    const byId = new Map(statuses.map((s) => [s.pathId, s.status]));
    for (const member of ending) {
      member.result.status = byId.get(member.id) ?? member.result.status;
      member.finish();
    }
  }

  async function lookAt(orgId: number, chunk: PathWaiter[], signal: AbortSignal): Promise<void> {
    const fromMs = fromOf(chunk, Date.now());
    let records: PathData[];
    try {
      records = await state.client.listPathData(
        { orgId, pathIds: chunk.map((m) => m.id), fromMs },
        { priority: 'high', signal },
      );
    } catch (error) {
      if (signal.aborted) return;
      for (const member of chunk) member.result.failure = failureText(error);
      return;
    }
    const byId = new Map(records.map((r) => [r.pathId, r]));
    for (const member of chunk) {
      const record = byId.get(member.id);
      member.result.failure = undefined;
      if (record === undefined) continue;
      const last = lastDataTime(record);
      if (last !== undefined) member.result.lastDataAt = last * 1000;
      // Elements older than the path's own since (the chunk asks from the earliest) do not count.
      member.result.measuring = holdsData(record) && (last === undefined || last * 1000 >= member.since);
    }
  }

  return {
    expect() {
      onTheirWay += 1;
      let arrived = false;
      return () => {
        if (arrived) return;
        arrived = true;
        onTheirWay -= 1;
        schedule();
      };
    },
    wait(path) {
      const { signal } = path;
      if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
      return new Promise<MeasuringResult>((resolve, reject) => {
        const onAbort = () => {
          end();
          reject(signal?.reason as Error);
        };
        const hardEnd = setTimeout(
          () => waiter.finish(),
          Math.max(0, path.deadline - Date.now()) + timing.lastAnswerGraceMs,
        );
        const end = () => {
          clearTimeout(hardEnd);
          signal?.removeEventListener('abort', onAbort);
          waiters.delete(waiter);
          for (const flight of flying) if (flight.members.every((m) => !waiters.has(m))) flight.controller.abort();
          if (waiters.size === 0) {
            clearTimeout(timer);
            timer = undefined;
          }
        };
        const waiter: PathWaiter = {
          orgId: path.orgId,
          id: path.id,
          since: path.since,
          deadline: path.deadline,
          lastSentAt: -Infinity,
          result: { measuring: false },
          finish: () => {
            if (!waiters.has(waiter)) return;
            end();
            resolve({ ...waiter.result });
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        waiters.add(waiter);
        newestJoinAt = Date.now();
        schedule();
      });
    },
  };
}

/** Where a look starts: the earliest since of the chunk, but no more than the window back. */
function fromOf(chunk: readonly PathWaiter[], now: number): number {
  return Math.max(Math.min(...chunk.map((m) => m.since)), now - MEASURE_WINDOW_MS);
}

/** The waiters split so that no request asks for more than 20 path-days or PATHS_PER_DATA_REQUEST paths. */
function chunks(members: readonly PathWaiter[], now: number): PathWaiter[][] {
  const sorted = [...members].sort((a, b) => a.since - b.since);
  const out: PathWaiter[][] = [];
  let current: PathWaiter[] = [];
  for (const member of sorted) {
    const next = [...current, member];
    const days = (now - fromOf(next, now)) / DAY_MS;
    if (current.length > 0 && (next.length > PATHS_PER_DATA_REQUEST || next.length * days > PATH_DAYS_PER_REQUEST)) {
      out.push(current);
      current = [member];
    } else current = next;
  }
  if (current.length > 0) out.push(current);
  return out;
}
