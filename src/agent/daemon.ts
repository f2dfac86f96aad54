import { hostname } from 'node:os';
import { agentSecrets, loadAgentConfig } from '../config/index.js';
import { Redactor } from '../core/redact.js';
import { fileStickReader } from '../ingest/index.js';
import { createAgentServiceSides } from './agent-service-sides.js';
// Not in its folder's index file, which the CLI loads: winston is the agent's alone.
import { createAgentLogger } from '../report/agent-logger.js';
import { createWriteQueues, formatProblem } from '../report/index.js';
import { createReloader, withOverrides } from './agent-reload.js';
import { startSources } from './agent-sources.js';
import { createCrashLoopGuard } from './crash-loop-guard.js';
import { holdSignal, type HeldSignal } from './early-signal.js';
import { createDeviceLocks } from './device-locks.js';
import { createIdleCollector, exposedGc } from './idle-collect.js';
import { createJobBoard } from './job-board.js';
import { jobIdSource } from './job-id.js';
import { JobIntake } from './job-intake.js';
import { recoverInterruptedJobs } from './interrupted-jobs.js';
import { startJob } from './run-job.js';
import { createStopSwitch, stopJobs } from './shutdown.js';
import { openStateStore, type StateStore } from './state-store.js';
import { runtimeDirectory, startStatusFile } from './status-file.js';
import { createStatusPageControl } from './status-page-control.js';
import { startNotifier } from './systemd-notify.js';

/**
 * `mpprov run`: watches for sticks and profiles and runs a job for each. Wiring only: where a
 * mount or profile becomes a job is job-intake.ts, a reload agent-reload.ts, a stop shutdown.ts,
 * a job run-job.ts, state state-store.ts, the words report.
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
  /**
   * SIGHUP as the caller holds it since its own first line (`mpprov run` takes the state folder's
   * lock first); held from runDaemon's first line when not given. Released when runDaemon ends.
   */
  hangup?: HeldSignal;
}

/** Runs until SIGTERM or SIGINT; resolves with the exit status. */
export async function runDaemon(options: DaemonOptions): Promise<number> {
  const env = options.env ?? process.env;
  const errors = options.errorStream ?? process.stderr;
  // A reload asked for while the agent starts is done once it can be; SIGHUP never kills it.
  const hangup = options.hangup ?? holdSignal('SIGHUP');
  try {
    return await serve(options, env, errors, hangup);
  } finally {
    hangup.release();
  }
}

async function serve(
  options: DaemonOptions,
  env: NodeJS.ProcessEnv,
  errors: NodeJS.WritableStream,
  hangup: HeldSignal,
): Promise<number> {
  const loaded = await loadAgentConfig(options.agentConfigFile, env);
  if (loaded.problems.length > 0) {
    for (const problem of loaded.problems) errors.write(`${formatProblem(problem)}\n`);
    errors.write(`${options.agentConfigFile}: INVALID, the agent does not start\n`);
    return 1;
  }
  const agent = withOverrides(loaded.config, options);
  // One redactor for everything the agent writes: agent.yaml's secrets, and each job's for its lifetime.
  const redactor = new Redactor();
  // One service side across every job of this agent: they share the token's limit and the rounds.
  const serviceSides = createAgentServiceSides(agent.stateDir);
  const removeStartSecrets = redactor.add(agentSecrets(agent));
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
  const settings = createReloader(
    { agent, state },
    {
      file: options.agentConfigFile,
      env,
      overrides: options,
      redactor,
      removeStartSecrets,
      logger,
      // Called on SIGHUP only, once everything below exists.
      follow: async (before, after) => {
        await sources.retarget(before, after);
        await statusPage.apply(after.statusPage?.listen);
      },
    },
  );
  const interrupted = await recoverInterruptedJobs(state);
  for (const job of interrupted)
    logger.log(
      'warn',
      `an earlier job did not finish: ${job.reason}; where it stopped: ${job.where.join('; ')}`,
      job.id,
    );

  // The live status: status.json always (mpprov notify reads it), the page when agent.yaml asks.
  const board = createJobBoard({ redactor, version: options.version, hostname: hostname() });
  const statusFile = startStatusFile({
    dir: runtimeDirectory(env),
    source: board,
    onProblem: (message) => logger.log('warn', message),
  });
  const statusPage = createStatusPageControl({
    board,
    redactor,
    logger,
    logFile: (id) => settings.current().state.logFile(id),
    eventsStateDir: agent.service?.events === undefined ? undefined : agent.stateDir,
  });
  await statusPage.apply(agent.statusPage?.listen);

  const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
  const idleCollector = createIdleCollector({
    gc: exposedGc(),
    onCollected: (before, after, ms) =>
      logger.log('debug', `idle: heap collected, ${mib(before)} -> ${mib(after)} MiB in use (${Math.round(ms)} ms)`),
  });
  const locks = createDeviceLocks();
  const stop = createStopSwitch();
  const stickQueue = createWriteQueues();
  const intake = new JobIntake({
    logger,
    crashLoop: createCrashLoopGuard(interrupted),
    nextJobId: jobIdSource(),
    stopping: () => stop.reason() !== undefined,
    // A job keeps the settings of its start: a reload reaches the next job, not this one.
    start: (id, request, hooks) =>
      startJob(id, request, {
        ...settings.current(),
        logger,
        redactor,
        reader: fileStickReader,
        locks,
        signal: stop.signal,
        stopReason: () => stop.reason(),
        serviceSides,
        hostname: hostname(),
        version: options.version,
        stickQueue,
        board,
        ...hooks,
      }),
    onBusy: () => idleCollector.busy(),
    // Never a banner stuck on WORKING: a job whose end did not reach the board ends there now.
    onGone: (id) => board.abandon(id, 'the job ended without a result (an internal error; see the journal)'),
    onIdle: () => idleCollector.idle(),
  });

  const notice = (message: string): void => logger.log('warn', message);
  const sources = await startSources(
    agent,
    {
      mount: (entry) => void intake.mount(entry),
      unmount: (entry) => intake.unmount(entry),
      profile: (file, settled) => void intake.profile(file, settled),
      notice,
    },
    env,
  );
  const notifier = startNotifier(env, notice);

  return new Promise<number>((resolve) => {
    const onTerm = (): void => onStop('SIGTERM');
    const onInt = (): void => onStop('SIGINT');
    const onStop = (signal: string): void => {
      const stopping = stopJobs(signal, {
        stop,
        jobs: () => intake.jobs(),
        writeMarker: (marker) => settings.current().state.writeMarker(marker),
        announce: () => notifier.stopping(),
        // The reload under way first: its follow() would start the watchers it changed anew after
        // they were closed, a findmnt left running once the agent has exited.
        quiet: () => [settings.settled().then(() => Promise.allSettled(sources.close()))],
        logger,
      });
      // A second signal changes nothing: the stop under way goes on (systemd's SIGKILL after
      // TimeoutStopSec, or the user's, ends it at once).
      if (stopping === undefined) return;
      // A reload now would reopen what the stop closes (the watchers, the status page).
      hangup.handOver(() => logger.log('info', 'SIGHUP: the agent is stopping; not reloaded'));
      void stopping.then(async (finished) => {
        notifier.close();
        idleCollector.close();
        board.stop();
        await Promise.allSettled([statusFile.close(), statusPage.close(), serviceSides.close()]);
        // None left behind: the daemon may run again in this process (tests do), and a signal
        // after the stop takes its default action again.
        process.off('SIGTERM', onTerm);
        process.off('SIGINT', onInt);
        hangup.release();
        logger.log('info', 'stopped');
        await logger.close();
        resolve(finished ? 0 : 1);
      });
    };
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
    hangup.handOver(() => void settings.reload());
    // Said, to the journal and to systemd, only once every signal has its handler: whoever waits
    // for this line may stop or reload the agent at once.
    logger.log(
      'info',
      `watching media roots ${agent.mediaRoots.join(', ')} (${sources.mode()})${agent.profilesDirs.length > 0 ? ` and profiles ${agent.profilesDirs.join(', ')}` : ''}`,
    );
    sources.announceCurrent();
    notifier.ready('watching for sticks');
  });
}
