import { jobEnded, type StatusJob } from '../core/agent-status.js';

/** Ids remembered as announced; the agent keeps 20 finished jobs, so this is ample and bounded. */
const REMEMBERED = 1000;

/**
 * Which jobs to announce: each job that ends while notify watches, once per job id.
 *
 * A job already ended before notify started is not announced (the technician saw it, or it is
 * old news). A job never seen running but found ended is announced when it ended after notify
 * started: a short job between two reads, or one that ended while the status file could not be
 * read yet (agent started after notify). Its `finished` time says which; a job ended without a
 * readable `finished` is announced unless it was there at the first read.
 */
export class JobTracker {
  private readonly announced = new Set<string>();
  private readonly seenRunning = new Set<string>();
  private firstRead = true;

  constructor(private readonly startedAt: number) {}

  /** The jobs of this read to announce now, oldest first. */
  update(jobs: readonly StatusJob[]): StatusJob[] {
    const due: StatusJob[] = [];
    // The file lists newest first; notifications go out in the order the jobs started.
    for (const job of [...jobs].reverse()) {
      if (this.announced.has(job.id)) continue;
      if (!jobEnded(job)) {
        this.seenRunning.add(job.id);
        continue;
      }
      if (this.seenRunning.has(job.id) || this.endedWhileWatching(job)) due.push(job);
      this.remember(job.id);
    }
    // A running job that left the file (the agent restarted) will never be seen ending.
    const present = new Set(jobs.map((job) => job.id));
    for (const id of this.seenRunning) if (!present.has(id)) this.seenRunning.delete(id);
    this.firstRead = false;
    return due;
  }

  private endedWhileWatching(job: StatusJob): boolean {
    const finished = job.finished === undefined ? Number.NaN : Date.parse(job.finished);
    return Number.isNaN(finished) ? !this.firstRead : finished >= this.startedAt;
  }

  private remember(id: string): void {
    this.seenRunning.delete(id);
    this.announced.add(id);
    if (this.announced.size > REMEMBERED) {
      const oldest = this.announced.values().next().value;
      if (oldest !== undefined) this.announced.delete(oldest);
    }
  }
}
