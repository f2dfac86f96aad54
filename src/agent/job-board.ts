import type { ApplyEvent } from '../apply/index.js';
import type { Redactor } from '../core/redact.js';
import { JobBanner, type AgentStatus, type StatusDevice, type StatusJob, type StatusSource } from '../status-page/index.js';

/**
 * The daemon's in-memory board of its jobs: the running ones and the last 20 finished, in the
 * shape of the status contract (status.json and the status page's events). Fed by run-job.ts;
 * every text is redacted the moment it arrives, while the job's own secrets are still known to
 * the redactor (they are forgotten when the job ends), and once more in each snapshot.
 */

export const FINISHED_KEPT = 20;
/** A job's step list is capped: a stick of many devices must not grow the page without end. */
const MAX_STEPS = 500;

export interface BoardJobStart {
  kind: 'stick' | 'profile';
  label: string;
  location: string;
  config: string;
  started: Date;
  stage: string;
}

export interface BoardJobEnd {
  /** The RESULT word. */
  result: string;
  summary: string;
  advice?: string | undefined;
  /** Stick only: whether the agent unmounted it. */
  released?: boolean | undefined;
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

export function createJobBoard(options: JobBoardOptions): JobBoard {
  const now = options.now ?? (() => new Date());
  const clean = (text: string): string => options.redactor.text(text);
  const agent = { pid: options.pid ?? process.pid, version: options.version, hostname: options.hostname, started: now().toISOString(), stopped: false };
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
      job.devices.push(found);
    }
    return found;
  };
  const addStep = (job: StatusJob, deviceName: string, text: string): void => {
    if (job.steps.length >= MAX_STEPS) return;
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
    job.summary = clean(end.summary);
    if (end.advice !== undefined) job.advice = clean(end.advice);
    if (job.kind === 'stick' && end.released !== undefined) job.released = end.released;
    job.banner = job.result === 'FAILED' ? JobBanner.Failed : job.kind === 'profile' ? JobBanner.Done : JobBanner.SafeToRemove;
    job.stage = 'ended';
    // A step still running when the job ended did not finish.
    for (const step of job.steps) {
      if (step.state !== 'running') continue;
      step.state = 'failed';
      step.ended = job.finished;
    }
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
      return options.redactor.value({ format: 1, agent: { ...agent }, updated, jobs: structuredClone(jobs) });
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
        device(job, clean(event.device)).at = clean(`step ${event.index + 1} ${event.description} failed: ${event.error}`);
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
        endStep(job, clean(event.device), `post-check: the service sees ${event.outcome.hostname}`, event.outcome.connected ? 'done' : 'failed');
        device(job, clean(event.device)).at = clean(event.outcome.sentence);
        return true;
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
