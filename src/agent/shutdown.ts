import type { AgentLogger } from '../report/index.js';
import type { JobMarker } from './state-store.js';

/**
 * SIGTERM and SIGINT: running jobs finish the request under way and start no networking restart
 * (the engine sees the abort), each is marked as stopped by the signal so the next start says so,
 * and the agent waits a grace period for them before it exits anyway.
 */

/** How long SIGTERM waits for jobs to finish their request before the agent exits anyway. */
export const STOP_GRACE_MS = 9_000;

/** The agent's stop: which signal stopped it (once one did), and the abort every job listens to. */
export interface StopSwitch {
  readonly signal: AbortSignal;
  /** The signal's name once the agent is stopping. */
  reason: () => string | undefined;
  /** The first signal stops the agent: false when it is already stopping. */
  trip: (signal: string) => boolean;
  /** Tells every job, through `signal`. */
  abort: () => void;
}

export function createStopSwitch(): StopSwitch {
  const controller = new AbortController();
  let reason: string | undefined;
  return {
    signal: controller.signal,
    reason: () => reason,
    trip: (signal) => {
      if (reason !== undefined) return false;
      reason = signal;
      return true;
    },
    abort: () => controller.abort(new Error(`stopped by ${reason}`)),
  };
}

/** What a stop needs of a running job (run-job.ts's RunningJob fits). */
interface StoppingJob {
  readonly marker: JobMarker;
  readonly done: Promise<unknown>;
}

export interface StopParts {
  stop: StopSwitch;
  /** The jobs under way at the moment of asking. */
  jobs: () => readonly StoppingJob[];
  /** Into the state folder of the moment. */
  writeMarker: (marker: JobMarker) => void;
  /** systemd's STOPPING=1. */
  announce: () => void;
  /** What goes quiet before the wait: the watchers (nothing new) and a reload under way. */
  quiet: () => readonly Promise<unknown>[];
  logger: Pick<AgentLogger, 'log'>;
  graceMs?: number;
}

/**
 * Stops the jobs for `signal`: undefined when the agent was already stopping (a second signal
 * changes nothing), else true once every job finished within the grace, false when the grace ran
 * out (their markers are written once more, for the next start).
 */
export function stopJobs(signal: string, parts: StopParts): Promise<boolean> | undefined {
  if (!parts.stop.trip(signal)) return undefined;
  const { logger } = parts;
  parts.announce();
  const running = parts.jobs();
  logger.log(
    'info',
    `${signal}: stopping; ${running.length} job(s) finish their request under way and start no networking restart`,
  );
  // On disk before the abort: killed during the grace, the agent's next start reads a stop, not a crash
  // (which would refuse the stick).
  for (const job of running) {
    job.marker.stoppedBy = signal;
    parts.writeMarker(job.marker);
  }
  parts.stop.abort();
  return waitForJobs(parts, parts.graceMs ?? STOP_GRACE_MS);
}

async function waitForJobs(parts: StopParts, graceMs: number): Promise<boolean> {
  await Promise.allSettled(parts.quiet());
  let timer: NodeJS.Timeout | undefined;
  const finished = await Promise.race([
    Promise.allSettled(parts.jobs().map((j) => j.done)).then(() => true),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(false), graceMs))),
  ]);
  clearTimeout(timer);
  if (!finished) {
    const left = parts.jobs();
    for (const job of left) parts.writeMarker(job.marker);
    parts.logger.log(
      'error',
      `${left.length} job(s) did not finish within ${graceMs / 1000} s; exiting anyway (recorded for the next start)`,
    );
  }
  return finished;
}
