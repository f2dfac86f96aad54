import type { ApplyEvent } from '../apply/index.js';
import type { Redactor } from '../core/redact.js';
import {
  JobBanner,
  type AgentStatus,
  type StatusDevice,
  type StatusJob,
  type StatusSource,
} from '../status-page/index.js';

/**
 * The daemon's in-memory board of its jobs: the running ones and the last 20 finished, in the
 * shape of the status contract (status.json and the status page's events). Fed by run-job.ts;
 * every text is redacted the moment it arrives, while the job's own secrets are still known to
 * the redactor (they are forgotten when the job ends), and once more in each snapshot.
 */

export const FINISHED_KEPT = 20;
/** A job's step list is capped: a stick of many devices must not grow the page without end. */
const MAX_STEPS = 500;
/** A finished job keeps only its failed steps (what a technician needs), at most this many. */
const FINISHED_STEPS_KEPT = 50;
/** Devices shown per job; a stick may name more, the rest are counted in `omittedDevices`. */
export const MAX_DEVICES_SHOWN = 100;
/** Names, URLs and step texts come from a stick: one may not fill the page on its own. */
const MAX_SHORT_TEXT = 300;
const MAX_LONG_TEXT = 2000;
/**
 * A snapshot's compact JSON stays under this many bytes: `mpprov notify` refuses a status file
 * over 1 MiB (STATUS_FILE_CAP), so the board must never write one. Oldest finished jobs go
 * first, then the steps of running jobs.
 */
export const SNAPSHOT_BYTE_BUDGET = 512 * 1024;

interface BoardJobStart {
  kind: 'stick' | 'profile';
  label: string;
  location: string;
  config: string;
  started: Date;
  stage: string;
}

interface BoardJobEnd {
  /** The RESULT word. */
  result: string;
  summary: string;
  advice?: string | undefined;
  /** Stick only: whether the agent unmounted it. */
  released?: boolean | undefined;
  /** Stick only: what became of it, and the sentence that says so (report/stick-release.ts). */
  removal?: { kind: 'released' | 'kept' | 'pulled' | 'unwritten'; sentence: string } | undefined;
  finished: Date;
}

export interface JobBoard extends StatusSource {
  start(id: string, job: BoardJobStart): void;
  stage(id: string, stage: string): void;
  /** The devices the stick names, once it is validated: each waits until its provisioning starts. */
  expect(id: string, devices: readonly { name: string; url: string }[]): void;
  event(id: string, event: ApplyEvent): void;
  /**
   * The job is over: its result is written and usb.log synced (or known to be owed), the stick
   * released where it was going to be. Only now does the banner leave WORKING.
   */
  end(id: string, end: BoardJobEnd): void;
  /** A job still on the board as running (its end never came): ended as FAILED with this reason. */
  abandon(id: string, reason: string): void;
  /** The agent is stopping: the board says so in every later snapshot. */
  stop(): void;
}

export interface JobBoardOptions {
  redactor: Redactor;
  version: string;
  hostname: string;
  pid?: number;
  now?: () => Date;
}

/**
 * The banner of an ended job: SAFE TO REMOVE only for a stick the agent unmounted; a stick it could
 * not unmount says to unmount it first, one pulled before its result was on it to insert it again.
 */
function bannerOf(job: StatusJob, end: BoardJobEnd): JobBanner {
  if (job.result === 'FAILED') return JobBanner.Failed;
  if (job.kind === 'profile') return JobBanner.Done;
  switch (end.removal?.kind) {
    case 'released':
      return JobBanner.SafeToRemove;
    case 'pulled':
    case 'unwritten':
      return JobBanner.InsertAgain;
    default:
      // Kept mounted, or not said (an older caller): never a SAFE TO REMOVE the agent did not make true.
      return end.released === true ? JobBanner.SafeToRemove : JobBanner.UnmountFirst;
  }
}

export function createJobBoard(options: JobBoardOptions): JobBoard {
  const now = options.now ?? (() => new Date());
  const cleanLong = (text: string): string => cap(options.redactor.text(text), MAX_LONG_TEXT);
  const clean = (text: string): string => cap(options.redactor.text(text), MAX_SHORT_TEXT);
  /** Per running job: the names of the devices beyond MAX_DEVICES_SHOWN, counted once each. */
  const hiddenDevices = new Map<string, Set<string>>();
  const agent = {
    pid: options.pid ?? process.pid,
    version: options.version,
    hostname: options.hostname,
    started: now().toISOString(),
    stopped: false,
  };
  /** Newest first. */
  let jobs: StatusJob[] = [];
  const listeners = new Set<(change: { ended: boolean }) => void>();
  let updated = now().toISOString();

  const changed = (ended = false): void => {
    updated = now().toISOString();
    for (const listener of listeners) listener({ ended });
  };
  const running = (id: string): StatusJob | undefined => jobs.find((j) => j.id === id && j.finished === undefined);
  const device = (job: StatusJob, name: string, url = ''): StatusDevice => {
    let found = job.devices.find((d) => d.name === name);
    if (found === undefined) {
      found = { name, url, state: 'waiting', at: 'waiting' };
      if (job.devices.length < MAX_DEVICES_SHOWN) job.devices.push(found);
      else {
        // Not on the board: updates go to a detached record, the count says how many are hidden.
        const hidden = hiddenDevices.get(job.id) ?? new Set<string>();
        hidden.add(name);
        hiddenDevices.set(job.id, hidden);
        job.omittedDevices = hidden.size;
      }
    }
    return found;
  };
  const addStep = (job: StatusJob, deviceName: string, text: string): void => {
    if (job.steps.length >= MAX_STEPS) {
      job.omittedSteps = (job.omittedSteps ?? 0) + 1;
      return;
    }
    job.steps.push({ device: deviceName, text: clean(text), state: 'running', started: now().toISOString() });
  };
  const endStep = (job: StatusJob, deviceName: string, text: string, state: 'done' | 'failed'): void => {
    const step = job.steps.findLast((s) => s.device === deviceName && s.state === 'running' && s.text === clean(text));
    if (step === undefined) return;
    step.state = state;
    step.ended = now().toISOString();
  };
  const trim = (): void => {
    const finished = jobs.filter((j) => j.finished !== undefined);
    if (finished.length <= FINISHED_KEPT) return;
    const dropped = new Set(finished.slice(FINISHED_KEPT).map((j) => j.id));
    jobs = jobs.filter((j) => !dropped.has(j.id));
  };

  const finish = (job: StatusJob, end: BoardJobEnd): void => {
    job.finished = end.finished.toISOString();
    job.result = clean(end.result);
    job.summary = cleanLong(end.summary);
    if (end.advice !== undefined) job.advice = cleanLong(end.advice);
    if (job.kind === 'stick' && end.released !== undefined) job.released = end.released;
    if (job.kind === 'stick' && end.removal !== undefined) job.removal = cleanLong(end.removal.sentence);
    job.banner = bannerOf(job, end);
    job.stage = 'ended';
    // A step still running when the job ended did not finish.
    for (const step of job.steps) {
      if (step.state !== 'running') continue;
      step.state = 'failed';
      step.ended = job.finished;
    }
    // The result says what happened; of the steps, only the failed ones still tell something.
    const failed = job.steps.filter((step) => step.state === 'failed');
    const kept = failed.slice(-FINISHED_STEPS_KEPT);
    const omitted = (job.omittedSteps ?? 0) + job.steps.length - kept.length;
    job.steps = kept;
    if (omitted > 0) job.omittedSteps = omitted;
    hiddenDevices.delete(job.id);
    trim();
    changed(true);
  };

  return {
    start(id, start) {
      jobs.unshift({
        id,
        kind: start.kind,
        label: clean(start.label),
        location: clean(start.location),
        config: clean(start.config),
        started: start.started.toISOString(),
        banner: JobBanner.Working,
        stage: clean(start.stage),
        devices: [],
        steps: [],
      });
      jobs.sort((a, b) => (a.started < b.started ? 1 : a.started > b.started ? -1 : 0));
      changed();
    },
    stage(id, stage) {
      const job = running(id);
      if (job === undefined || job.stage === stage) return;
      job.stage = clean(stage);
      changed();
    },
    expect(id, devices) {
      const job = running(id);
      if (job === undefined) return;
      for (const d of devices) device(job, clean(d.name), clean(d.url));
      changed();
    },
    event(id, event) {
      const job = running(id);
      if (job === undefined || !applyEvent(job, event)) return;
      changed();
    },
    end(id, end) {
      const job = running(id);
      if (job !== undefined) finish(job, end);
    },
    abandon(id, reason) {
      const job = running(id);
      if (job !== undefined) finish(job, { result: 'FAILED', summary: reason, finished: now() });
    },
    stop() {
      agent.stopped = true;
      changed(true);
    },
    snapshot(): AgentStatus {
      // Redacted once more as a whole: agent.yaml's secrets may have changed since (SIGHUP).
      const status: AgentStatus = options.redactor.value({
        format: 1 as const,
        agent: { ...agent },
        updated,
        jobs: structuredClone(jobs),
      });
      return withinBudget(status, SNAPSHOT_BYTE_BUDGET);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };

  /** What an engine event changes on the board; false when nothing the board shows changed. */
  function applyEvent(job: StatusJob, event: ApplyEvent): boolean {
    switch (event.type) {
      case 'device-start': {
        const d = device(job, clean(event.device), clean(event.url));
        d.url = clean(event.url);
        d.state = 'running';
        d.at = 'connecting';
        return true;
      }
      case 'step-start': {
        const d = device(job, clean(event.device));
        d.at = clean(`step ${event.index + 1}/${event.total} ${event.description}`);
        addStep(job, d.name, event.description);
        return true;
      }
      case 'step-done':
        endStep(job, clean(event.device), event.description, 'done');
        return true;
      case 'step-failed': {
        endStep(job, clean(event.device), event.description, 'failed');
        device(job, clean(event.device)).at = clean(
          `step ${event.index + 1} ${event.description} failed: ${event.error}`,
        );
        return true;
      }
      case 'waiting':
        device(job, clean(event.device)).at = clean(`${event.description}: waiting (${event.reason})`);
        return true;
      case 'service-check-start': {
        const d = device(job, clean(event.device));
        d.at = clean(`post-check: does the service see ${event.hostname}?`);
        addStep(job, d.name, `post-check: the service sees ${event.hostname}`);
        return true;
      }
      case 'service-check-done':
        endStep(
          job,
          clean(event.device),
          `post-check: the service sees ${event.outcome.hostname}`,
          event.outcome.connected ? 'done' : 'failed',
        );
        device(job, clean(event.device)).at = clean(event.outcome.sentence);
        return true;
      // One step per path, so the page and `mpprov status` show which paths measure.
      case 'service-paths-start': {
        const d = device(job, clean(event.device));
        d.at = clean(`paths: do ${event.targets.length} path(s) exist and measure?`);
        for (const target of event.targets) addStep(job, d.name, pathStep(target));
        return true;
      }
      case 'service-path':
        device(job, clean(event.device)).at = clean(event.sentence);
        return true;
      case 'service-paths-done': {
        const name = clean(event.device);
        for (const path of event.paths) endStep(job, name, pathStep(path.target), path.measuring ? 'done' : 'failed');
        const measuring = event.paths.filter((p) => p.measuring).length;
        device(job, name).at = clean(`${measuring}/${event.paths.length} paths measuring`);
        return true;
      }
      case 'device-result': {
        const d = device(job, clean(event.result.device), clean(event.result.url));
        d.state = event.result.outcome === 'failed' ? 'failed' : 'done';
        d.at = clean(`${event.result.outcome}: ${event.result.message}`);
        return true;
      }
      default:
        return false;
    }
  }
}

const pathStep = (target: string): string => `path to ${target} measures`;

function cap(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/**
 * Fits a snapshot into `budget` bytes of compact JSON. Cuts what says least first: the older steps
 * and the device lists of every job, then the oldest finished jobs, and only then the last steps
 * and devices. Never drops a running job; what is cut is counted in omittedSteps/omittedDevices.
 */
function withinBudget(status: AgentStatus, budget: number): AgentStatus {
  if (jsonBytes(status) <= budget) return status;
  const jobs = [...status.jobs];
  const fits = (): boolean => jsonBytes({ ...status, jobs }) <= budget;
  const keepSteps = (keep: number): void => {
    for (const [i, job] of jobs.entries()) {
      if (job.steps.length <= keep) continue;
      jobs[i] = {
        ...job,
        steps: job.steps.slice(job.steps.length - keep),
        omittedSteps: (job.omittedSteps ?? 0) + job.steps.length - keep,
      };
    }
  };
  const keepDevices = (keep: number): void => {
    for (const [i, job] of jobs.entries()) {
      if (job.devices.length <= keep) continue;
      jobs[i] = {
        ...job,
        devices: job.devices.slice(0, keep),
        omittedDevices: (job.omittedDevices ?? 0) + job.devices.length - keep,
      };
    }
  };
  const cuts = [() => keepSteps(50), () => keepSteps(10), () => keepDevices(20), () => keepDevices(5)];
  for (const cut of cuts) {
    if (fits()) break;
    cut();
  }
  for (let i = jobs.length - 1; i >= 0 && !fits(); i--) {
    if (jobs[i]?.finished !== undefined) jobs.splice(i, 1);
  }
  if (!fits()) keepSteps(0);
  if (!fits()) keepDevices(0);
  return { ...status, jobs };
}
