import { announcementFor } from './announcement.js';
import { JobTracker } from './job-tracker.js';
import { NotifySender } from './notify-send.js';
import type { StatusRead } from './read-status-file.js';
import { StatusFollower, type FollowTimings } from './status-follower.js';

export const DEFAULT_STATUS_FILE = '/run/mpprov/status.json';

export interface NotifyOptions {
  statusFile: string;
  /** Ends the companion (the CLI aborts it on SIGTERM/SIGINT). */
  signal: AbortSignal;
  /** A line for stdout: each notification, and what is followed (the user unit's journal). */
  out: (line: string) => void;
  /** A warning line for stderr. */
  warn: (line: string) => void;
  notifySend?: string;
  timings?: Partial<FollowTimings>;
}

/** Warnings about jobs the reader skipped, remembered so each is given once; bounded. */
const SKIP_WARNINGS_REMEMBERED = 200;

/**
 * `mpprov notify`: follows the agent's status file and sends one desktop notification per job
 * that ends while it watches. Nothing in a status file, however broken, ends it: only the signal.
 */
export async function runNotify(options: NotifyOptions): Promise<void> {
  const tracker = new JobTracker(Date.now());
  const sender = new NotifySender(options.warn, options.notifySend);
  let lastProblem: string | undefined;
  let agentStopped: boolean | undefined;
  const skipWarnings = new Set<string>();

  const handle = (read: StatusRead): void => {
    if (!read.ok) {
      // One line per distinct problem: a file that stays missing or broken is said once.
      if (read.problem !== lastProblem) options.warn(read.problem);
      lastProblem = read.problem;
      return;
    }
    if (lastProblem !== undefined) options.out(`reading ${options.statusFile} again`);
    lastProblem = undefined;
    for (const line of read.skipped) {
      if (skipWarnings.has(line)) continue;
      if (skipWarnings.size >= SKIP_WARNINGS_REMEMBERED) skipWarnings.clear();
      skipWarnings.add(line);
      options.warn(line);
    }
    const stopped = read.status.agent.stopped;
    if (stopped && agentStopped !== true)
      options.out(`the agent (pid ${read.status.agent.pid}) has stopped; waiting for it to start again`);
    agentStopped = stopped;
    for (const job of tracker.update(read.status.jobs)) {
      const announcement = announcementFor(job);
      options.out(`[${job.id}] ${announcement.urgency === 'critical' ? 'critical' : 'normal'}: ${announcement.body}`);
      void sender.send(announcement);
    }
  };

  const follower = new StatusFollower(options.statusFile, handle, options.timings);
  const ended = new Promise<void>((resolve) => {
    if (options.signal.aborted) resolve();
    else options.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  const first = await follower.start();
  options.out(`following ${options.statusFile}: one desktop notification (notify-send) per job that ends from now on`);
  handle(first);
  await ended;
  follower.stop();
}
