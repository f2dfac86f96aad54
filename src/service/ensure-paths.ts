import type { Appliance, NetworkPath } from './data-api-model.js';
import { failureText } from './failure-kind.js';
import type { MeasuringRounds } from './measuring-rounds.js';
import type { PathCatalogue } from './path-catalogue.js';
import {
  measuringSentence,
  NO_ORGANIZATION,
  pathName,
  type PathOutcome,
  type PathProgress,
  type WantedPath,
} from './path-outcome.js';
import type { WatchState } from './watch-state.js';

/**
 * One MP's paths (docs/service-model.md, "Paths"), after it was confirmed AVAILABLE: each is found
 * by (sourceAppliance = the MP's name, target), created when missing, given its location when the
 * stick names one the path does not have, then waited on until it measures. Each path ends as an
 * outcome with a sentence; nothing thrown leaves here but the caller's abort.
 */

export interface EnsurePathsOptions {
  /** `service.wait_measuring_s`, counted from the call: finding and creating the paths included. */
  waitS: number;
  /** Data counts from here (epoch ms); default one hour ago. */
  since?: number | undefined;
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: PathProgress) => void) | undefined;
}

const HOUR_MS = 3_600_000;

export interface PathWork {
  state: WatchState;
  catalogue: PathCatalogue;
  measuring: MeasuringRounds;
}

export async function ensurePaths(
  work: PathWork,
  appliance: Appliance,
  wanted: readonly WantedPath[],
  options: EnsurePathsOptions,
): Promise<PathOutcome[]> {
  const startedAt = Date.now();
  const targets = uniqueTargets(wanted);
  // Each path is on its way to the measuring rounds until its wait joins them (or it ends first).
  const arrivals = targets.map(() => work.measuring.expect());
  try {
    return await ensureAll(work, appliance, targets, arrivals, { ...options, startedAt });
  } finally {
    for (const arrived of arrivals) arrived();
  }
}

async function ensureAll(
  work: PathWork,
  appliance: Appliance,
  targets: readonly WantedPath[],
  arrivals: readonly (() => void)[],
  options: EnsurePathsOptions & { startedAt: number },
): Promise<PathOutcome[]> {
  const { startedAt } = options;
  const deadline = startedAt + Math.max(0, options.waitS * 1000);
  const since = options.since ?? startedAt - HOUR_MS;
  const untilDeadline = AbortSignal.timeout(Math.max(0, deadline - startedAt));
  let orgId: number | undefined;
  try {
    orgId = await organizationOf(work.state, appliance, combined(untilDeadline, options.signal));
  } catch (error) {
    if (options.signal?.aborted === true) throw options.signal.reason;
    if (!untilDeadline.aborted) throw error;
    // The organization is asked (GET /v3/organization) within the wait too: a slow answer ends it.
    return targets.map(({ target }) => ({
      target,
      created: false,
      measuring: false,
      sentence: `${pathName(target)} could not be made sure of: ${ranOut(deadline - startedAt)}`,
    }));
  }
  return Promise.all(
    targets.map((path, index) => {
      const arrived = arrivals[index] ?? (() => undefined);
      // A path that ends before its wait (a failure, no organization) is no longer on its way either.
      return onePath(work, appliance.name, orgId, path, { ...options, startedAt, deadline, since, arrived }).finally(
        arrived,
      );
    }),
  );
}

/**
 * The record's orgId; else the organization the watch listed it in (found by its id: a
 * vendor-true record has no hostname, and its name need not be the hostname it was waited for
 * by); else service.org_id; else the token's only organization.
 */
async function organizationOf(
  state: WatchState,
  appliance: Appliance,
  signal: AbortSignal,
): Promise<number | undefined> {
  const listedIn = [...state.known.values()].find((known) => known.id === appliance.id)?.orgId;
  const hostname = appliance.hostname ?? appliance.name;
  return appliance.orgId ?? listedIn ?? state.organizationOf(hostname) ?? (await state.soleOrganization(signal));
}

function combined(deadline: AbortSignal, caller: AbortSignal | undefined): AbortSignal {
  return caller === undefined ? deadline : AbortSignal.any([deadline, caller]);
}

const ranOut = (waitMs: number): string =>
  `the wait of ${Math.round(waitMs / 1000)} s ran out before the service answered`;

/** One outcome per target: the stick's checks refuse a target twice, and a second one would only repeat the first. */
function uniqueTargets(wanted: readonly WantedPath[]): WantedPath[] {
  const seen = new Map<string, WantedPath>();
  for (const path of wanted) if (!seen.has(path.target.toLowerCase())) seen.set(path.target.toLowerCase(), path);
  return [...seen.values()];
}

interface PathTiming extends EnsurePathsOptions {
  startedAt: number;
  deadline: number;
  since: number;
  /** Called when the path's wait is about to join the measuring rounds. */
  arrived: () => void;
}

async function onePath(
  work: PathWork,
  source: string,
  orgId: number | undefined,
  wanted: WantedPath,
  timing: PathTiming,
): Promise<PathOutcome> {
  const { target } = wanted;
  if (orgId === undefined)
    return { target, created: false, measuring: false, sentence: `${pathName(target)} ${NO_ORGANIZATION}` };
  const untilDeadline = AbortSignal.timeout(Math.max(0, timing.deadline - Date.now()));
  const signal = combined(untilDeadline, timing.signal);
  let ensured;
  try {
    ensured = await work.catalogue.ensure(orgId, source, target, signal);
  } catch (error) {
    if (timing.signal?.aborted === true) throw timing.signal.reason;
    ensured = { failure: error };
  }
  if ('failure' in ensured) {
    const why = untilDeadline.aborted ? ranOut(timing.deadline - timing.startedAt) : failureText(ensured.failure);
    return {
      target,
      created: false,
      measuring: false,
      sentence: `${pathName(target)} could not be made sure of: ${why}`,
    };
  }
  const { created } = ensured;
  let path = ensured.path;
  const notes: string[] = [];
  if (wanted.location !== undefined && path.targetLocation !== wanted.location) {
    const placed = await setLocation(work, orgId, path, wanted.location, signal);
    if ('failure' in placed) {
      if (timing.signal?.aborted === true) throw timing.signal.reason;
      notes.push(`its location could not be set: ${failureText(placed.failure)}`);
    } else path = placed.path;
  }
  timing.onProgress?.({
    target,
    id: path.id,
    created,
    measuring: false,
    elapsedMs: Date.now() - timing.startedAt,
    sentence: `${pathName(target)}: ${created ? 'created' : 'exists'}, waiting for its first data`,
  });
  timing.arrived();
  const result = await work.measuring.wait({
    orgId,
    id: path.id,
    since: timing.since,
    deadline: timing.deadline,
    signal: timing.signal,
  });
  const facts = { target, created, measuring: result.measuring, status: result.status };
  const sentence = [measuringSentence(facts, timing.deadline - timing.startedAt), ...notes].join('; ');
  return {
    ...facts,
    id: path.id,
    location: path.targetLocation ?? undefined,
    sentence:
      result.failure === undefined || result.measuring
        ? sentence
        : `${sentence}; the last look failed: ${result.failure}`,
  };
}

async function setLocation(
  work: PathWork,
  orgId: number,
  path: NetworkPath,
  location: string,
  signal: AbortSignal,
): Promise<{ path: NetworkPath } | { failure: unknown }> {
  try {
    const answer = await work.state.client.setTargetLocation(path.id, location, { signal });
    // A service that answers without the field (or with another record) still took the location.
    const placed = { ...path, targetLocation: answer.id === path.id ? (answer.targetLocation ?? location) : location };
    work.catalogue.update(orgId, placed);
    return { path: placed };
  } catch (error) {
    return { failure: error };
  }
}
