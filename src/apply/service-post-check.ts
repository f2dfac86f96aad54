import type { ConnectionOutcome, ConnectionProgress, PathOutcome, PathProgress, WantedPath } from '../service/index.js';
import type { ApplyEventSink, DeviceResult } from './apply-events.js';
import { Outcome } from './apply-events.js';
import { type PathReport, pathsNotChecked, type ServiceReport } from './path-report.js';
import type { ServiceSide } from './service-side.js';

/**
 * The post-check of docs/service-model.md, for one device of a run: after its restart and
 * verification (provisionDevice has returned), wait on the run's shared watch until the service
 * lists the MP as AVAILABLE or the wait runs out; then make sure each path its stick names exists
 * and wait until it measures. Its outcome is reported beside the device's, never instead of it:
 * a service problem never fails, delays beyond the waits, or rolls back a device.
 *
 * Which results are checked: `changed` (the restart took the MP off the service), and also
 * `no-change`. A technician who re-inserts a stick after a site visit gets NO CHANGE, and wants
 * to know the MP is connected and measuring too; it costs a round when it is. A failed device is
 * not checked (its configuration is not what the stick says), nor is a dry run (nothing was sent).
 */

export interface PostCheckTarget {
  side: ServiceSide;
  waitConnectedS: number;
  waitMeasuringS: number;
}

export function wantsPostCheck(result: DeviceResult): boolean {
  return result.outcome === Outcome.Changed || result.outcome === Outcome.NoChange;
}

const SHUTTING_DOWN = 'the check was stopped because mpprov is shutting down';

export async function servicePostCheck(
  target: PostCheckTarget,
  device: string,
  hostname: string,
  wanted: readonly WantedPath[],
  options: {
    signal?: AbortSignal | undefined;
    /** Epoch ms of the device's restart: a path measures when it has data since then. */
    since?: number | undefined;
    onEvent: ApplyEventSink;
  },
): Promise<ServiceReport> {
  const { onEvent } = options;
  const { client, watch } = target.side;
  onEvent({ type: 'service-check-start', device, hostname, url: client.url, waitS: target.waitConnectedS });
  const started = Date.now();
  let outcome: ConnectionOutcome;
  try {
    outcome = await watch.waitConnected(hostname, {
      waitS: target.waitConnectedS,
      signal: options.signal,
      onProgress: (progress) =>
        onEvent({
          type: 'service-waiting',
          device,
          hostname,
          elapsedMs: progress.elapsedMs,
          reason: progressReason(progress),
        }),
    });
  } catch {
    // Only the run's signal ends the wait by throwing: the agent is shutting down.
    outcome = {
      kind: 'unchecked',
      connected: false,
      hostname,
      sentence: `not confirmed: ${SHUTTING_DOWN}`,
      waitedMs: Date.now() - started,
      polls: 0,
    };
  }
  onEvent({ type: 'service-check-done', device, outcome });
  if (wanted.length === 0) return outcome;
  const paths = await checkPaths(target, device, hostname, outcome, wanted, options);
  onEvent({ type: 'service-paths-done', device, paths });
  return { ...outcome, paths };
}

async function checkPaths(
  target: PostCheckTarget,
  device: string,
  hostname: string,
  outcome: ConnectionOutcome,
  wanted: readonly WantedPath[],
  options: { signal?: AbortSignal | undefined; since?: number | undefined; onEvent: ApplyEventSink },
): Promise<PathReport[]> {
  const targets = wanted.map((w) => w.target);
  // Paths are created only for an MP the service confirmed AVAILABLE (and has a record of).
  if (!outcome.connected) return pathsNotChecked(targets, 'not checked: the service does not confirm the MP connected');
  if (outcome.appliance === undefined)
    return pathsNotChecked(targets, 'not checked: the service gave no record of the MP to find its paths by');
  options.onEvent({ type: 'service-paths-start', device, hostname, targets, waitS: target.waitMeasuringS });
  try {
    const outcomes = await target.side.watch.ensurePaths(outcome.appliance, wanted, {
      waitS: target.waitMeasuringS,
      since: options.since,
      signal: options.signal,
      onProgress: (progress) => options.onEvent(pathEvent(device, progress)),
    });
    return wanted.map((w) => {
      const found = outcomes.find((o) => o.target === w.target);
      return found === undefined ? notReported(w.target) : pathReport(found);
    });
  } catch {
    // Only the run's signal ends the wait by throwing: the agent is shutting down.
    return pathsNotChecked(targets, `not confirmed: ${SHUTTING_DOWN}`);
  }
}

function pathReport(outcome: PathOutcome): PathReport {
  return {
    target: outcome.target,
    id: outcome.id ?? null,
    created: outcome.created,
    measuring: outcome.measuring,
    status: outcome.status ?? null,
    ...(outcome.location === undefined ? {} : { location: outcome.location }),
    sentence: outcome.sentence,
  };
}

/** A target the watch returned no outcome for (it folds targets it takes for the same): said, not guessed. */
function notReported(target: string): PathReport {
  return pathsNotChecked([target], 'not confirmed: the service side reported nothing for it')[0] as PathReport;
}

function pathEvent(device: string, progress: PathProgress): Parameters<ApplyEventSink>[0] {
  return {
    type: 'service-path',
    device,
    target: progress.target,
    id: progress.id ?? null,
    created: progress.created,
    measuring: progress.measuring,
    status: progress.status ?? null,
    elapsedMs: progress.elapsedMs,
    sentence: progress.sentence,
  };
}

function progressReason(progress: ConnectionProgress): string {
  if (progress.failure !== undefined)
    return `the service did not answer usefully (${progress.failure.message}); asking again`;
  if (progress.status === 'absent') return `the service lists no MP "${progress.hostname}" yet`;
  return `the service says ${progress.status ?? 'nothing yet'}`;
}
