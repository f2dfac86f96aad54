import type { InterruptedJob } from './interrupted-jobs.js';

/**
 * A stick whose job ended the previous run without a signal (a crash, a kill, power loss) is not
 * started again in this run: a stick that crashes the agent would otherwise crash it on every
 * restart while it stays inserted. One such end is enough: a second try is the loop itself.
 * Keyed by the stick's identity (label and configuration), so the same stick with a changed
 * configuration runs. Taking a refused stick out clears its mark, so its next insertion runs
 * again (a crash loop needs the stick to stay in; a technician who re-plugs it decided).
 */
export interface CrashLoopGuard {
  /** The job that ended the previous run unfinished with this stick, if any: then it is refused. */
  crashedJob(label: string, configSha256: string): string | undefined;
  /** The stick refused at `root`: taking it out from there clears its mark. */
  refused(root: string, label: string, configSha256: string): void;
  /** The mount at `root` is gone: true when it was a refused stick, whose next insertion now runs. */
  takenOut(root: string): boolean;
}

export function createCrashLoopGuard(interrupted: readonly InterruptedJob[]): CrashLoopGuard {
  const crashed = new Map<string, string>();
  const refusedAt = new Map<string, string>();
  for (const job of interrupted) {
    const source = job.marker.source;
    // A job stopped by a signal was asked to stop: the stick did not take the agent down.
    if (job.marker.stoppedBy === undefined && source.kind === 'stick')
      crashed.set(stickIdentity(source.label, source.config_sha256), job.id);
  }
  return {
    crashedJob: (label, configSha256) => crashed.get(stickIdentity(label, configSha256)),
    refused: (root, label, configSha256) => void refusedAt.set(root, stickIdentity(label, configSha256)),
    takenOut: (root) => {
      const identity = refusedAt.get(root);
      if (identity === undefined) return false;
      refusedAt.delete(root);
      crashed.delete(identity);
      return true;
    },
  };
}

/** What the technician reads (journal and usb.log) when a stick is refused. */
export function crashRefusal(jobId: string): string {
  return (
    `this stick is not started: its job ${jobId} ended the agent's previous run without finishing (crash, kill or power loss), ` +
    'and starting it again could do the same on every restart while it stays inserted; check it with mpprov validate, ' +
    'then take it out and put it back to run it again, or change its configuration'
  );
}

function stickIdentity(label: string, configSha256: string): string {
  return `${label}\0${configSha256}`;
}
