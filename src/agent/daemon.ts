import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { type AgentConfig, agentSecrets, loadAgentConfig } from '../config/index.js';
import { Redactor } from '../core/redact.js';
import { RateLimiter } from '../service/index.js';
import {
  fileStickReader,
  findConfigFile,
  isUnderMediaRoot,
  type MountEntry,
  type MountWatcher,
  readConfigFile,
  stickLabel,
  watchMounts,
} from '../ingest/index.js';
// Not in their folders' index files, which the CLI loads: chokidar and winston are the agent's alone.
import { type ProfilesWatcher, type SettledFile, watchProfiles } from '../ingest/profiles-watcher.js';
import { createAgentLogger } from '../report/agent-logger.js';
import { appendDurably, createWriteQueues, formatProblem, USB_LOG_NAME } from '../report/index.js';
import { createDeviceLocks } from './device-locks.js';
import { createIdleCollector, exposedGc } from './idle-collect.js';
import { createJobBoard } from './job-board.js';
import { recoverInterruptedJobs } from './interrupted-jobs.js';
import { jobIdSource } from './job-id.js';
import { RELEASING } from './finish-job.js';
import { type JobRequest, type RunningJob, startJob } from './run-job.js';
import { openStateStore, type StateStore } from './state-store.js';
import { runtimeDirectory, startStatusFile } from './status-file.js';
import { createStatusPageControl } from './status-page-control.js';
import { startNotifier } from './systemd-notify.js';

/**
 * `mpprov run`: watches for sticks and profiles and runs a job for each. Wiring only: detection
 * lives in ingest, a job in run-job.ts, state in state-store.ts, the words in report.
 */

export interface DaemonOptions {
  agentConfigFile: string;
  /** --state-dir: overrides agent.yaml's state_dir, also across reloads. */
  stateDir?: string;
  /** --secrets-record: overrides agent.yaml's secrets_record, also across reloads. */
  secretsRecord?: string;
  env?: NodeJS.ProcessEnv;
  version: string;
  /** Where startup problems go before the logger exists. */
  errorStream?: NodeJS.WritableStream;
}

/** How long SIGTERM waits for jobs to finish their request before the agent exits anyway. */
const STOP_GRACE_MS = 9_000;

/** Runs until SIGTERM or SIGINT; resolves with the exit status. */
export async function runDaemon(options: DaemonOptions): Promise<number> {
  const env = options.env ?? process.env;
  const errors = options.errorStream ?? process.stderr;
  const loaded = await loadAgentConfig(options.agentConfigFile, env);
  if (loaded.problems.length > 0) {
    for (const problem of loaded.problems) errors.write(`${formatProblem(problem)}\n`);
    errors.write(`${options.agentConfigFile}: INVALID, the agent does not start\n`);
    return 1;
  }
  let agent = withOverrides(loaded.config, options);
  // One redactor for everything the agent writes: agent.yaml's secrets, and each job's for its lifetime.
  const redactor = new Redactor();
  // One rate limit for the data API across every job of this agent (they share the token).
  const serviceLimiter = new RateLimiter();
  let removeAgentSecrets = redactor.add(agentSecrets(agent));
  const logger = createAgentLogger({ level: agent.logLevel, redactor, env });
  let state: StateStore;
  try {
    state = await openStateStore(agent.stateDir, redactor);
  } catch (error) {
    logger.log('error', `cannot use the state directory ${agent.stateDir}: ${(error as Error).message}`);
    await logger.close();
    return 1;
  }
  logger.log(
    'info',
    `mpprov ${options.version} starting: agent config ${agent.file ?? `${options.agentConfigFile} (missing: defaults)`}, state ${agent.stateDir}`,
  );
  // A stick whose job ended the previous run without a signal (a crash, a kill, power loss) is not
  // started again in this run: a stick that crashes the agent would otherwise crash it on every
  // restart while it stays inserted. Keyed by the stick's identity (label and configuration).
  const crashedSticks = new Map<string, string>();
  // Where a refused crashed stick is mounted: taking it out clears its mark, so its next insertion
  // runs again (a crash loop needs the stick to stay in; a technician who re-plugs it decided).
  const refusedAt = new Map<string, string>();
  for (const job of await recoverInterruptedJobs(state)) {
    logger.log(
      'warn',
      `an earlier job did not finish: ${job.reason}; where it stopped: ${job.where.join('; ')}`,
      job.id,
    );
    const source = job.marker.source;
    if (job.marker.stoppedBy === undefined && source.kind === 'stick')
      crashedSticks.set(stickIdentity(source.label, source.config_sha256), job.id);
  }

  // The live status: status.json always (mpprov notify reads it), the page when agent.yaml asks.
  const board = createJobBoard({ redactor, version: options.version, hostname: hostname() });
  const statusFile = startStatusFile({
    dir: runtimeDirectory(env),
    source: board,
    onProblem: (message) => logger.log('warn', message),
  });
  const statusPage = createStatusPageControl({ board, redactor, logger, logFile: (id) => state.logFile(id) });
  await statusPage.apply(agent.statusPage?.listen);

  const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
  const idleCollector = createIdleCollector({
    gc: exposedGc(),
    onCollected: (before, after, ms) =>
      logger.log('debug', `idle: heap collected, ${mib(before)} -> ${mib(after)} MiB in use (${Math.round(ms)} ms)`),
  });
  const locks = createDeviceLocks();
  const abort = new AbortController();
  let stopping: string | undefined;
  const running = new Map<string, RunningJob>();
  const byKey = new Map<string, RunningJob>();
  const detecting = new Set<string>();
  /** Roots mounted again while their last mount was still being looked at: looked at once more. */
  const detectAgain = new Set<string>();
  const stickQueue = createWriteQueues();
  const nextJobId = jobIdSource();

  const launch = (key: string, request: JobRequest): void => {
    const id = nextJobId();
    const forget = (): void => {
      if (byKey.get(key) === job) byKey.delete(key);
    };
    const job: RunningJob = startJob(id, request, {
      agent,
      state,
      logger,
      redactor,
      reader: fileStickReader,
      locks,
      signal: abort.signal,
      stopReason: () => stopping,
      serviceLimiter,
      hostname: hostname(),
      version: options.version,
      stickQueue,
      onSettled: forget,
      board,
      stickInUse: (root, self) =>
        [...running.values()].some(
          (other) => other.id !== self && other.request.kind === 'stick' && other.request.root === root,
        ),
    });
    running.set(id, job);
    byKey.set(key, job);
    idleCollector.busy();
    job.done
      .catch((error: unknown) => logger.log('error', `internal error: ${(error as Error).stack ?? String(error)}`, id))
      .finally(() => {
        // Never a banner stuck on WORKING: a job whose end did not reach the board ends there now.
        board.abandon(id, 'the job ended without a result (an internal error; see the journal)');
        running.delete(id);
        forget();
        if (running.size === 0) idleCollector.idle();
      });
  };

  const already = (key: string, what: string): boolean => {
    const job = byKey.get(key);
    if (job === undefined) return false;
    logger.log(
      'info',
      `${what}: the same configuration is already being applied by this job; not started twice`,
      job.id,
    );
    if (job.log.stick !== undefined && !job.log.stick.status().ok) void job.log.stick.reattach();
    return true;
  };

  const onMount = async (entry: MountEntry): Promise<void> => {
    const root = entry.target;
    if (stopping !== undefined) return;
    if (detecting.has(root)) {
      detectAgain.add(root);
      return;
    }
    detecting.add(root);
    try {
      const configFile = await findConfigFile(root);
      if (configFile === undefined) {
        logger.log('debug', `${root} mounted (${entry.fstype}): no mpprov.yaml at its root, not a stick for mpprov`);
        return;
      }
      const sha = await configSha256(configFile);
      const key = `stick\0${root}\0${sha}`;
      if (already(key, `stick at ${root}`)) return;
      const crashedJob = crashedSticks.get(stickIdentity(stickLabel(root), sha));
      if (crashedJob !== undefined) {
        const sentence =
          `this stick is not started: its job ${crashedJob} ended the agent's previous run without finishing (crash, kill or power loss), ` +
          'and starting it again could do the same on every restart while it stays inserted; check it with mpprov validate, ' +
          'then take it out and put it back to run it again, or change its configuration';
        // usb.log first: once the journal says it, the stick has it too.
        await appendRefusal(root, sentence).catch((error: unknown) =>
          logger.log('warn', `${root}: cannot write usb.log: ${(error as Error).message}`),
        );
        logger.log('error', `stick at ${root}: ${sentence}`);
        refusedAt.set(root, stickIdentity(stickLabel(root), sha));
        return;
      }
      const device = (await stat(root)).dev;
      launch(key, {
        kind: 'stick',
        root,
        configName: basename(configFile),
        label: stickLabel(root),
        device,
        configSha256: sha,
      });
    } catch (error) {
      logger.log('warn', `${root}: cannot look at the stick: ${(error as Error).message}`);
    } finally {
      detecting.delete(root);
      // The stick came back while we read its last mount (a fast pull and re-insert): the new
      // mount gets its own look; the same content still running is not started twice (already()).
      if (detectAgain.delete(root)) void onMount(entry);
    }
  };

  const onUnmount = (entry: MountEntry): void => {
    const refused = refusedAt.get(entry.target);
    if (refused !== undefined) {
      refusedAt.delete(entry.target);
      crashedSticks.delete(refused);
      logger.log('info', `the refused stick at ${entry.target} was taken out: its next insertion runs again`);
    }
    for (const job of running.values()) {
      if (job.request.kind === 'stick' && job.request.root === entry.target && job.marker.stage !== RELEASING) {
        job.log.stick?.detach();
        logger.log('info', `the stick at ${entry.target} was unmounted; the job goes on from its copy`, job.id);
      }
    }
  };

  const onProfile = async (file: string, settled?: SettledFile): Promise<void> => {
    if (stopping !== undefined) return;
    const sha = await configSha256(file);
    // Read after the watcher saw its writes settle; written again since, what was read may be half
    // of the next version, and that version's own settling brings the file back.
    if (settled !== undefined && !(await unchangedSince(file, settled))) {
      logger.log(
        'debug',
        `profile ${file} was written again after its writes settled: it becomes a job once they settle again`,
      );
      return;
    }
    const key = `profile\0${file}\0${sha}`;
    if (already(key, `profile ${file}`)) return;
    launch(key, {
      kind: 'profile',
      root: dirname(file),
      configName: basename(file),
      label: basename(file),
      configSha256: sha,
    });
  };

  const notice = (message: string): void => logger.log('warn', message);
  // MPPROV_FINDMNT names another findmnt (a missing one forces the /proc/self/mountinfo fallback).
  const startMounts = (roots: readonly string[]): Promise<MountWatcher> =>
    watchMounts({
      mediaRoots: roots,
      onMount: (e) => void onMount(e),
      onUnmount,
      onNotice: notice,
      ...(env.MPPROV_FINDMNT === undefined ? {} : { findmntCommand: env.MPPROV_FINDMNT }),
    });
  const startProfiles = (dirs: readonly string[]): Promise<ProfilesWatcher> =>
    watchProfiles({ dirs, onProfile: (f, settled) => void onProfile(f, settled), onNotice: notice });

  let mounts = await startMounts(agent.mediaRoots);
  let profiles = await startProfiles(agent.profilesDirs);
  logger.log(
    'info',
    `watching media roots ${agent.mediaRoots.join(', ')} (${mounts.mode()})${agent.profilesDirs.length > 0 ? ` and profiles ${agent.profilesDirs.join(', ')}` : ''}`,
  );
  // A stick that was in before the agent started is a stick too.
  for (const entry of mounts.current()) void onMount(entry);

  const notifier = startNotifier(env, notice);
  notifier.ready('watching for sticks');

  const reload = async (): Promise<void> => {
    const next = await loadAgentConfig(options.agentConfigFile, env);
    if (next.problems.length > 0) {
      for (const problem of next.problems) logger.log('error', `agent config: ${formatProblem(problem)}`);
      logger.log('error', 'SIGHUP: the agent config is invalid; keeping the one in use');
      return;
    }
    // A missing file means every default at start-up; one that vanished since (an editor's
    // rename, a mistake) would swap the media roots and the state folder for the defaults.
    if (next.config.file === undefined && agent.file !== undefined) {
      logger.log(
        'error',
        `SIGHUP: ${options.agentConfigFile} does not exist (any more); keeping the agent config in use`,
      );
      return;
    }
    const candidate = withOverrides(next.config, options);
    // Everything that can fail before anything changes: a reload is taken whole or not at all.
    let nextState = state;
    if (candidate.stateDir !== agent.stateDir) {
      try {
        nextState = await openStateStore(candidate.stateDir, redactor);
      } catch (error) {
        logger.log(
          'error',
          `SIGHUP: cannot use the state directory ${candidate.stateDir} (${(error as Error).message}); keeping the agent config in use`,
        );
        return;
      }
    }
    const before = agent;
    agent = candidate;
    state = nextState;
    removeAgentSecrets();
    removeAgentSecrets = redactor.add(agentSecrets(agent));
    logger.setLevel(agent.logLevel);
    if (!sameList(agent.mediaRoots, before.mediaRoots)) {
      await mounts.close();
      mounts = await startMounts(agent.mediaRoots);
      // A stick already in under a root that is new is a stick too, as at start-up.
      for (const entry of mounts.current()) if (!isUnderMediaRoot(entry.target, before.mediaRoots)) void onMount(entry);
    }
    if (!sameList(agent.profilesDirs, before.profilesDirs)) {
      await profiles.close();
      profiles = await startProfiles(agent.profilesDirs);
    }
    await statusPage.apply(agent.statusPage?.listen);
    logger.log(
      'info',
      `SIGHUP: reloaded ${options.agentConfigFile}; media roots ${agent.mediaRoots.join(', ')}, profiles ${agent.profilesDirs.join(', ') || '(none)'}`,
    );
  };

  let reloading = Promise.resolve();
  const onHup = (): void => {
    reloading = reloading
      .then(reload)
      .catch((error: unknown) => logger.log('error', `SIGHUP: reload failed: ${(error as Error).message}`));
  };

  return new Promise<number>((resolve) => {
    const stop = (signal: string): void => {
      if (stopping !== undefined) return;
      stopping = signal;
      notifier.stopping();
      logger.log(
        'info',
        `${signal}: stopping; ${running.size} job(s) finish their request under way and start no networking restart`,
      );
      for (const job of running.values()) {
        job.marker.stoppedBy = signal;
        state.writeMarker(job.marker);
      }
      abort.abort(new Error(`stopped by ${signal}`));
      void (async () => {
        await Promise.allSettled([mounts.close(), profiles.close(), reloading]);
        let timer: NodeJS.Timeout | undefined;
        const finished = await Promise.race([
          Promise.allSettled([...running.values()].map((j) => j.done)).then(() => true),
          new Promise<boolean>((r) => (timer = setTimeout(() => r(false), STOP_GRACE_MS))),
        ]);
        clearTimeout(timer);
        if (!finished) {
          for (const job of running.values()) state.writeMarker(job.marker);
          logger.log(
            'error',
            `${running.size} job(s) did not finish within ${STOP_GRACE_MS / 1000} s; exiting anyway (recorded for the next start)`,
          );
        }
        notifier.close();
        idleCollector.close();
        board.stop();
        await Promise.allSettled([statusFile.close(), statusPage.close()]);
        process.off('SIGHUP', onHup);
        logger.log('info', 'stopped');
        await logger.close();
        resolve(finished ? 0 : 1);
      })();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
    process.on('SIGHUP', onHup);
  });
}

function withOverrides(config: AgentConfig, options: DaemonOptions): AgentConfig {
  if (options.stateDir === undefined && options.secretsRecord === undefined) return config;
  return {
    ...config,
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
    ...(options.secretsRecord === undefined ? {} : { secretsRecord: options.secretsRecord }),
  };
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

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function stickIdentity(label: string, configSha256: string): string {
  return `${label}\0${configSha256}`;
}

/**
 * One line on the stick's usb.log, the way job logs are written (fusefat refuses plain appends);
 * a usb.log that is a link off the stick's own device is refused before anything is written.
 */
async function appendRefusal(root: string, sentence: string): Promise<void> {
  const device = (await stat(root)).dev;
  await appendDurably(join(root, USB_LOG_NAME), `${new Date().toISOString()} ERROR mpprov: ${sentence}\n`, { device });
}
