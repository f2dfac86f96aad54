import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { findConfigFile, type MountEntry, readConfigFile, stickLabel } from '../ingest/index.js';
// A type only: the watcher itself (chokidar) stays the daemon's to load.
import type { SettledFile } from '../ingest/profiles-watcher.js';
import { type AgentLogger, appendDurably, USB_LOG_NAME, type UsbLogWriter } from '../report/index.js';
import { type CrashLoopGuard, crashRefusal } from './crash-loop-guard.js';
import { aliasFolder } from './folder-alias.js';
import { RELEASING } from './finish-job.js';
import type { JobRequest, RunningJob } from './run-job.js';

/**
 * Where a mount or a profile becomes a job: one job per configuration at a time (the same stick
 * or profile seen again while its job runs is that job), a stick that crashed the previous run
 * refused (crash-loop-guard.ts), and a stick mounted again while its last mount is still being
 * looked at looked at once more.
 */

/** What the intake needs of a running job (run-job.ts's RunningJob fits). */
export type IntakeJob = Pick<RunningJob, 'id' | 'request' | 'marker'> & {
  readonly done: Promise<unknown>;
  readonly log: { readonly stick: Pick<UsbLogWriter, 'status' | 'reattach' | 'detach'> | undefined };
};

/** What the intake hands each job it starts. */
export interface JobHooks {
  /** The job's stick side is settled: the same configuration seen again is a new job from now on. */
  onSettled: () => void;
  /** True while another job than `id` still uses the stick at `root`. */
  stickInUse: (root: string, id: string) => boolean;
}

/** A stick's configuration file and the SHA-256 of its bytes ('' when it cannot be read). */
export interface StickConfig {
  configFile: string;
  sha256: string;
}

export interface IntakeParts {
  logger: Pick<AgentLogger, 'log'>;
  crashLoop: CrashLoopGuard;
  /** Starts a job: run-job.ts's startJob with the agent's configuration of the moment. */
  start: (id: string, request: JobRequest, hooks: JobHooks) => IntakeJob;
  nextJobId: () => string;
  /** True once the agent is stopping: nothing becomes a job any more. */
  stopping: () => boolean;
  /** A job started; a job is gone (its promise settled); no job is left. */
  onBusy?: () => void;
  onGone?: (id: string) => void;
  onIdle?: () => void;
  /** How a mount's configuration is found: lookAtStick, or a test's seam around it. */
  look?: (root: string) => Promise<StickConfig | undefined>;
}

export class JobIntake {
  readonly #parts: IntakeParts;
  readonly #look: (root: string) => Promise<StickConfig | undefined>;
  readonly #running = new Map<string, IntakeJob>();
  /** Duplicate key (kind, place, configuration hash) -> the job applying it until it settles. */
  readonly #byKey = new Map<string, IntakeJob>();
  readonly #detecting = new Set<string>();
  /** Roots mounted again while their last mount was still being looked at: looked at once more. */
  readonly #detectAgain = new Set<string>();

  constructor(parts: IntakeParts) {
    this.#parts = parts;
    this.#look = parts.look ?? lookAtStick;
  }

  /** The jobs under way. */
  jobs(): IntakeJob[] {
    return [...this.#running.values()];
  }

  /** A mount under a media root: a job when it holds an mpprov.yaml not already being applied. */
  async mount(entry: MountEntry): Promise<void> {
    // The mount point as shown (escaped when its name is not UTF-8): the key and the text of every
    // sentence; `path` names the folder for fs calls that take text (a link to its bytes if need be).
    const root = entry.target;
    const { logger, crashLoop } = this.#parts;
    if (this.#parts.stopping()) return;
    if (this.#detecting.has(root)) {
      this.#detectAgain.add(root);
      return;
    }
    this.#detecting.add(root);
    let folder: JobRequest['folder'];
    try {
      if (entry.targetBytes !== undefined)
        folder = { bytes: entry.targetBytes, alias: await aliasFolder(entry.targetBytes) };
      const path = folder?.alias.path ?? root;
      const seen = await this.#look(path);
      if (seen === undefined) {
        logger.log('debug', `${root} mounted (${entry.fstype}): no mpprov.yaml at its root, not a stick for mpprov`);
        return;
      }
      const sha = seen.sha256;
      const key = `stick\0${root}\0${sha}`;
      if (this.#already(key, `stick at ${root}`)) return;
      const label = stickLabel(root);
      const crashedJob = crashLoop.crashedJob(label, sha);
      if (crashedJob !== undefined) {
        const sentence = crashRefusal(crashedJob);
        // usb.log first: once the journal says it, the stick has it too.
        await appendRefusal(path, sentence).catch((error: unknown) =>
          logger.log('warn', `${root}: cannot write usb.log: ${(error as Error).message}`),
        );
        logger.log('error', `stick at ${root}: ${sentence}`);
        crashLoop.refused(root, label, sha);
        return;
      }
      const device = (await stat(path)).dev;
      this.#launch(key, {
        kind: 'stick',
        root,
        ...(folder === undefined ? {} : { folder }),
        configName: basename(seen.configFile),
        label,
        device,
        configSha256: sha,
      });
      // The job's from now on: its link goes when the job does.
      folder = undefined;
    } catch (error) {
      logger.log('warn', `${root}: cannot look at the stick: ${(error as Error).message}`);
    } finally {
      await folder?.alias.remove();
      this.#detecting.delete(root);
      // The stick came back while we read its last mount (a fast pull and re-insert): the new
      // mount gets its own look; the same content still running is not started twice.
      if (this.#detectAgain.delete(root)) void this.mount(entry);
    }
  }

  /** A mount gone: a refused stick may run again, and a running job's usb.log waits for its stick. */
  unmount(entry: MountEntry): void {
    const { logger } = this.#parts;
    if (this.#parts.crashLoop.takenOut(entry.target))
      logger.log('info', `the refused stick at ${entry.target} was taken out: its next insertion runs again`);
    for (const job of this.#running.values()) {
      if (job.request.kind === 'stick' && job.request.root === entry.target && job.marker.stage !== RELEASING) {
        job.log.stick?.detach();
        logger.log('info', `the stick at ${entry.target} was unmounted; the job goes on from its copy`, job.id);
      }
    }
  }

  /** A profile whose writes settled: a job unless written again since, or already being applied. */
  async profile(file: string, settled?: SettledFile): Promise<void> {
    if (this.#parts.stopping()) return;
    const sha = await configSha256(file);
    // Read after the watcher saw its writes settle; written again since, what was read may be half
    // of the next version, and that version's own settling brings the file back.
    if (settled !== undefined && !(await unchangedSince(file, settled))) {
      this.#parts.logger.log(
        'debug',
        `profile ${file} was written again after its writes settled: it becomes a job once they settle again`,
      );
      return;
    }
    const key = `profile\0${file}\0${sha}`;
    if (this.#already(key, `profile ${file}`)) return;
    this.#launch(key, {
      kind: 'profile',
      root: dirname(file),
      configName: basename(file),
      label: basename(file),
      configSha256: sha,
    });
  }

  #launch(key: string, request: JobRequest): void {
    const { logger } = this.#parts;
    const id = this.#parts.nextJobId();
    const forget = (): void => {
      if (this.#byKey.get(key) === job) this.#byKey.delete(key);
    };
    const job = this.#parts.start(id, request, {
      onSettled: forget,
      stickInUse: (root, self) =>
        [...this.#running.values()].some(
          (other) => other.id !== self && other.request.kind === 'stick' && other.request.root === root,
        ),
    });
    this.#running.set(id, job);
    this.#byKey.set(key, job);
    this.#parts.onBusy?.();
    job.done
      .catch((error: unknown) => logger.log('error', `internal error: ${(error as Error).stack ?? String(error)}`, id))
      .finally(() => {
        this.#parts.onGone?.(id);
        this.#running.delete(id);
        forget();
        // The link its stick's folder was named by, now that nothing of the job writes through it.
        void request.folder?.alias.remove();
        if (this.#running.size === 0) this.#parts.onIdle?.();
      });
  }

  #already(key: string, what: string): boolean {
    const job = this.#byKey.get(key);
    if (job === undefined) return false;
    this.#parts.logger.log(
      'info',
      `${what}: the same configuration is already being applied by this job; not started twice`,
      job.id,
    );
    if (job.log.stick !== undefined && !job.log.stick.status().ok) void job.log.stick.reattach();
    return true;
  }
}

/** The configuration at a mount's root, or undefined when it holds none. */
export async function lookAtStick(root: string): Promise<StickConfig | undefined> {
  const configFile = await findConfigFile(root);
  if (configFile === undefined) return undefined;
  return { configFile, sha256: await configSha256(configFile) };
}

async function configSha256(file: string): Promise<string> {
  const read = await readConfigFile(file);
  return read.ok ? createHash('sha256').update(read.bytes).digest('hex') : '';
}

/** True while `file` is still the one the watcher saw settle: no write, truncation or rename since. */
async function unchangedSince(file: string, settled: SettledFile): Promise<boolean> {
  try {
    const now = await stat(file);
    return now.ino === settled.ino && now.size === settled.size && now.mtimeMs === settled.mtimeMs;
  } catch {
    return false;
  }
}

/**
 * One line on the stick's usb.log, the way job logs are written (fusefat refuses plain appends);
 * a usb.log that is a link off the stick's own device is refused before anything is written.
 */
async function appendRefusal(root: string, sentence: string): Promise<void> {
  const device = (await stat(root)).dev;
  await appendDurably(join(root, USB_LOG_NAME), `${new Date().toISOString()} ERROR mpprov: ${sentence}\n`, { device });
}
