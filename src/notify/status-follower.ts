import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { readStatusFile, type StatusRead } from './read-status-file.js';

export interface FollowTimings {
  /** How often the directory is checked: does it exist, is it still the one watched. */
  checkMs: number;
  /** The safety net: the file is read at least this often, whatever the watcher says. */
  pollMs: number;
  /** Events come in bursts (tmp written, renamed): read once they settle. */
  settleMs: number;
}

const DEFAULT_TIMINGS: FollowTimings = { checkMs: 1000, pollMs: 5000, settleMs: 50 };

/**
 * Follows the status file: fs.watch on its DIRECTORY (the agent replaces the file by a rename,
 * so a watch on the file itself would stay on the old inode), plus a slow poll in case an event
 * is lost. The directory may not exist yet (the agent has not started) or may go and come back
 * (systemd removes RuntimeDirectory= when the agent stops): then it is checked every second and
 * watched again once it is there. Every read, good or bad, goes to `onRead`.
 */
export class StatusFollower {
  private readonly dir: string;
  private readonly name: string;
  private readonly timings: FollowTimings;
  private watcher: FSWatcher | undefined;
  private watchedDir: string | undefined;
  private dirMissing = false;
  private checkTimer: NodeJS.Timeout | undefined;
  private settleTimer: NodeJS.Timeout | undefined;
  private reading = false;
  private readAgain = false;
  private lastRead = 0;
  private stopped = false;

  constructor(
    private readonly file: string,
    private readonly onRead: (read: StatusRead) => void,
    timings: Partial<FollowTimings> = {},
  ) {
    this.dir = dirname(file);
    this.name = basename(file);
    this.timings = { ...DEFAULT_TIMINGS, ...timings };
  }

  /** Reads once and returns that read (not passed to onRead), then follows. */
  async start(): Promise<StatusRead> {
    await this.checkDirectory(false);
    const first = this.dirMissing ? this.missingDirectory() : await this.readNow();
    this.checkTimer = setInterval(() => void this.checkDirectory(true), this.timings.checkMs);
    return first;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.checkTimer);
    clearTimeout(this.settleTimer);
    this.closeWatcher();
  }

  private async checkDirectory(report: boolean): Promise<void> {
    let identity: string | undefined;
    try {
      const info = await stat(this.dir);
      identity = info.isDirectory() ? `${info.dev}:${info.ino}` : undefined;
    } catch {
      identity = undefined;
    }
    if (this.stopped) return;
    if (identity === undefined) {
      this.closeWatcher();
      if (!this.dirMissing && report) this.onRead(this.missingDirectory());
      this.dirMissing = true;
      return;
    }
    this.dirMissing = false;
    if (identity !== this.watchedDir) {
      // New, or removed and made again: the old watch (if any) follows a deleted directory.
      this.closeWatcher();
      this.openWatcher(identity);
      if (report) this.scheduleRead();
    } else if (Date.now() - this.lastRead >= this.timings.pollMs) {
      this.scheduleRead();
    }
  }

  private openWatcher(identity: string): void {
    try {
      this.watcher = watch(this.dir, { persistent: true }, (_event, filename) => {
        // Linux names the entry; where a platform does not, any change may be ours.
        if (filename === null || filename === this.name) this.scheduleRead();
      });
      this.watcher.on('error', () => {
        // The directory went away under the watch: the next check finds out and starts again.
        this.closeWatcher();
      });
      this.watchedDir = identity;
    } catch {
      // Not watchable (e.g. no permission to list it): the poll alone still reads the file.
      this.watcher = undefined;
      this.watchedDir = identity;
    }
  }

  private closeWatcher(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.watchedDir = undefined;
  }

  private scheduleRead(): void {
    if (this.stopped) return;
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => void this.readAndReport(), this.timings.settleMs);
  }

  private async readAndReport(): Promise<void> {
    // One read at a time; a change during a read means one more read after it.
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.readAgain = false;
        const read = await this.readNow();
        if (this.stopped) return;
        this.onRead(read);
      } while (this.readAgain);
    } finally {
      this.reading = false;
    }
  }

  private async readNow(): Promise<StatusRead> {
    this.lastRead = Date.now();
    return readStatusFile(this.file);
  }

  private missingDirectory(): StatusRead {
    return {
      ok: false,
      reason: 'missing-dir',
      problem: `${this.dir} does not exist (yet): waiting for the agent (mpprov.service) to create it`,
    };
  }
}
