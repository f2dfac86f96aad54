import type { ConnectionOutcome } from './connection-outcome.js';
import { createConnectionRounds, type RoundTiming, type WaitConnectedOptions } from './connection-rounds.js';
import type { DataApi } from './data-api-client.js';
import type { Appliance } from './data-api-model.js';
import { ensurePaths, type EnsurePathsOptions } from './ensure-paths.js';
import { createMeasuringRounds } from './measuring-rounds.js';
import { createPathCatalogue } from './path-catalogue.js';
import type { PathOutcome, WantedPath } from './path-outcome.js';
import { planPaths, type PathPlanEntry } from './plan-paths.js';
import { createWatchState } from './watch-state.js';

/**
 * The service side of a run (or of the agent across its jobs), shared by every MP it handles
 * (docs/service-model.md, "Fleet rounds" and "Paths"): MPs waiting to be confirmed join rounds,
 * paths are found in shared lists and created once, and paths waiting to measure join rounds of
 * their own, all through the client's one rate limiter. Nothing but the caller's abort is thrown:
 * every failure of the service ends as an outcome with a sentence.
 */

export interface ServiceWatchOptions {
  /** `service.org_id`: the organization of MPs whose records do not say theirs. */
  orgId?: number | undefined;
  /** Round spacing and the last answer's grace, for tests; defaults in DEFAULT_TIMING. */
  timing?: Partial<RoundTiming> | undefined;
}

export interface ServiceWatch {
  /** Waits until the service lists the MP as AVAILABLE, or `waitS` ran out; see connection-rounds.ts. */
  waitConnected(hostname: string, options: WaitConnectedOptions): Promise<ConnectionOutcome>;
  /** After the MP is AVAILABLE (`appliance` as the service listed it): its paths exist and measure. */
  ensurePaths(appliance: Appliance, wanted: readonly WantedPath[], options: EnsurePathsOptions): Promise<PathOutcome[]>;
  /**
   * An event (SEQUENCER_EVENT AVAILABLE) names this MP: if it is waited for, a round asks about it
   * soon instead of at the regular pace. A hint, never an answer: only the service's reply ends a wait.
   */
  hint(hostname: string): void;
  /** Read-only: what ensurePaths would do with the MP's paths (for `plan`). */
  planPaths(
    hostname: string,
    wanted: readonly WantedPath[],
    options?: { signal?: AbortSignal },
  ): Promise<PathPlanEntry[]>;
}

export const DEFAULT_TIMING: RoundTiming = { roundMs: 2_000, minGapMs: 250, lastAnswerGraceMs: 1_000 };

export function createServiceWatch(client: DataApi, options: ServiceWatchOptions = {}): ServiceWatch {
  const timing = { ...DEFAULT_TIMING, ...options.timing };
  const state = createWatchState(client, options.orgId);
  const connection = createConnectionRounds(state, timing);
  const catalogue = createPathCatalogue(client);
  // An MP still waited for may bring paths: the measuring rounds keep their spacing for them.
  const work = { state, catalogue, measuring: createMeasuringRounds(state, timing, () => connection.waiting()) };
  return {
    waitConnected: (hostname, waitOptions) => connection.wait(hostname, waitOptions),
    hint: (hostname) => connection.hint(hostname),
    ensurePaths: (appliance, wanted, pathOptions) => ensurePaths(work, appliance, wanted, pathOptions),
    planPaths: (hostname, wanted, planOptions) => planPaths(state, catalogue, hostname, wanted, planOptions),
  };
}
