import { join } from 'node:path';
import { type ApplyEvent, applyStick, type ServiceSide, stickSecrets, type StickResult } from '../apply/index.js';
import { validateStick } from '../certs/index.js';
import { type AgentConfig, hasErrors, normaliseDeviceUrl, type Problem } from '../config/index.js';
import { preflightStick } from '../preflight/index.js';
import type { Redactor } from '../core/redact.js';
import type { AgentServiceSides } from './agent-service-sides.js';
import { snapshotReader, snapshotStick, type StickReader, type StickSnapshot } from '../ingest/index.js';
import {
  type AgentLogger,
  concludeJob,
  createEventFormatter,
  busyText,
  createJobLog,
  formatInvalidLine,
  formatJobLine,
  formatProblemLine,
  type JobLog,
  RESULT_TXT,
} from '../report/index.js';
import { deviceLockKeys, resolveDeviceIdentity } from '../client/index.js';
import { setStage } from './board-feed.js';
import { checkStickSignature } from './check-stick-signature.js';
import type { FolderAlias } from './folder-alias.js';
import { finishJob, type JobEnd, jobHeader } from './finish-job.js';
import { failJob } from './job-failure.js';
import type { DeviceLocks } from './device-locks.js';
import type { JobBoard } from './job-board.js';
import type { JobMarker, JobSourceRecord, StateStore } from './state-store.js';

/**
 * One job: snapshot the stick, validate, take the devices' locks, run the engine, and write the
 * log and result everywhere they belong. Never throws: whatever happens ends as a RESULT line.
 */

export interface JobRequest {
  kind: 'stick' | 'profile';
  /**
   * A stick's mount folder as the mount table shows it, or the profiles folder: the job's key and
   * the text of its sentences. For a folder whose name is not UTF-8 that text is escaped
   * (`/media/tech/ST\xffICK`) and names no folder: then `folder` does.
   */
  root: string;
  /** Stick only, when its folder's name is not UTF-8: its bytes, which reads take, and a link to them for writes. */
  folder?: { bytes: Buffer; alias: FolderAlias };
  /** `mpprov.yaml` as on the stick, or the profile's file name. */
  configName: string;
  label: string;
  /** Stick only: the root's device number (fs.Stats.dev) when it was detected. */
  device?: number;
  /** The configuration's SHA-256 when it was detected (the snapshot's own hash wins). */
  configSha256: string;
}

export interface JobEnvironment {
  agent: AgentConfig;
  state: StateStore;
  logger: AgentLogger;
  /** The agent's one redactor: the job adds its stick's secrets for its lifetime. */
  redactor: Redactor;
  /** How the job reads the stick's copy: fileStickReader, or a test's counting seam. */
  reader: StickReader;
  locks: DeviceLocks;
  /** Aborted when the agent stops: the engine finishes the request under way and starts no restart. */
  signal: AbortSignal;
  /** The signal's name once the agent is stopping. */
  stopReason: () => string | undefined;
  /** The service side shared by every job's post-check: one rate limit for the token, one watch. */
  serviceSides?: AgentServiceSides | undefined;
  hostname: string;
  version: string;
  /** One write at a time per stick root, across jobs. */
  stickQueue: (root: string) => <T>(write: () => Promise<T>) => Promise<T>;
  /**
   * Called once the job's stick side is settled (result written, what is owed kept as a note):
   * from then on the same stick inserted again is a new job, not this one's duplicate.
   */
  onSettled?: () => void;
  /** True while another job than `id` still uses the stick at `root`: then it is not released. */
  stickInUse?: (root: string, id: string) => boolean;
  /** The daemon's live board (status.json, the status page): told the stage, the engine's events, the end. */
  board?: JobBoard;
}

export interface RunningJob {
  readonly id: string;
  readonly request: JobRequest;
  readonly marker: JobMarker;
  /** Set once the job log exists (at once, synchronously). */
  readonly log: JobLog;
  readonly done: Promise<JobEnd>;
}

export function startJob(id: string, request: JobRequest, env: JobEnvironment): RunningJob {
  const log = createJobLog({
    jobId: id,
    localFile: env.state.logFile(id),
    logger: env.logger,
    redactor: env.redactor,
    ...(request.kind === 'stick' && request.device !== undefined
      ? {
          stick: {
            root: request.folder?.alias.path ?? request.root,
            device: request.device,
            serialize: env.stickQueue(request.root),
          },
        }
      : {}),
  });
  const marker: JobMarker = {
    id,
    started: new Date().toISOString(),
    pid: process.pid,
    source: sourceRecord(request, request.configSha256),
    stage: 'reading the stick',
    devices: {},
  };
  if (log.stick !== undefined) {
    // At once, before anything else reaches the stick: a stick pulled from now on says BUSY, and
    // its usb.log ends with the line below (kept last until the RESULT line replaces it).
    log.stick.writeResultTxt(RESULT_TXT.busy, busyText(new Date(marker.started), id));
    log.stick.setTrailer(formatJobLine(new Date(marker.started), id, STILL_RUNNING));
  }
  env.board?.start(id, {
    kind: request.kind,
    label: request.label,
    location: request.root,
    config: request.configName,
    started: new Date(marker.started),
    stage: marker.stage,
  });
  const job = { id, request, marker, log } as RunningJob & { done: Promise<JobEnd> };
  // Whatever throws outside the engine's guard is still this job's failure, on the stick and in the state folder.
  job.done = runJob(job, env).catch((error: unknown) => failJob(job, env, error));
  return job;
}

/** usb.log's last line while the job runs. */
const STILL_RUNNING =
  'the job is still running: if this is the last line, the stick was removed before the job ended; the result is written to this stick when it is next inserted';

function sourceRecord(request: JobRequest, sha: string): JobSourceRecord {
  return {
    kind: request.kind,
    label: request.label,
    location: request.root,
    config: request.configName,
    config_sha256: sha,
  };
}

async function runJob(job: RunningJob, env: JobEnvironment): Promise<JobEnd> {
  const { id, request, marker, log } = job;
  const { state } = env;
  const started = new Date(marker.started);
  state.writeMarker(marker);
  void state.appendHistory({ event: 'start', id, time: marker.started, source: marker.source });

  const notes = request.kind === 'stick' ? await state.notesFor(request.label, request.configSha256) : [];
  for (const note of notes) log.stick?.append(note.text);
  if (notes.length > 0)
    log.writeLocal('info', `usb.log: adding the notes of earlier job(s) ${notes.map((n) => n.id).join(', ')}`);

  let snapshot: StickSnapshot | undefined;
  let failure: string | undefined;
  try {
    // By its bytes, not its link: the snapshot asks the mount table whether the folder is FAT
    // (case-insensitive names), which knows the folder, not a link to it.
    snapshot = await snapshotStick(
      request.folder?.bytes ?? request.root,
      request.configName,
      join(state.jobDir(id), 'stick'),
    );
  } catch (error) {
    failure = `the stick could not be read (${(error as Error).message}); nothing was sent to any device`;
  }
  // A profile is read twice: by the daemon once its writes settled (the content this job stands
  // for), then here. Written again in between, what was read here may be half of its next
  // version: it is not run, and the watcher brings the new content once its writes settle.
  if (snapshot !== undefined && request.kind === 'profile' && snapshot.configSha256 !== request.configSha256) {
    failure = `${request.configName} was written again while this job read it; nothing was sent to any device (its new content becomes a job of its own once written)`;
    snapshot = undefined;
    env.onSettled?.();
  }
  const header = jobHeader(job, env, started, snapshot?.configSha256 ?? request.configSha256);
  marker.source = sourceRecord(request, header.configSha256);
  log.header(header);

  let result: StickResult | undefined;
  let removeSecrets = (): void => undefined;
  if (snapshot !== undefined) {
    const kib = (snapshot.bytes / 1024).toFixed(1);
    log.write(
      'info',
      `read the ${request.kind === 'stick' ? 'stick' : 'profiles folder'}: ${snapshot.files} file(s), ${kib} KiB`,
    );
    for (const note of snapshot.notes) log.write('warn', `not read: ${note}`);
    // Our own job stopped half-way on this very configuration: what it left pending on the
    // device is this configuration's, so it is replaced rather than refused as someone else's.
    const resuming = notes.some((n) => n.kind === 'interrupted' && n.config_sha256 === snapshot?.configSha256);
    if (resuming)
      log.write(
        'info',
        'an earlier job with this configuration was interrupted: changes it left pending on the device are replaced by this run',
      );
    try {
      const outcome = await applyOnce(job, env, snapshot, resuming);
      result = outcome.result;
      failure = outcome.failure;
      removeSecrets = outcome.removeSecrets;
    } catch (error) {
      failure = `internal error: ${(error as Error).message}`;
    }
  }

  // The stick's copy holds its secrets and is no longer needed: gone before anyone is told the job ended.
  await state.removeJobDir(id).catch(() => undefined);

  const stopReason = env.stopReason();
  // A job that got everything done before the signal took effect was not interrupted.
  const stopped = stopReason !== undefined && (result === undefined || result.outcome === 'failed');
  if (stopped) {
    marker.stoppedBy = stopReason;
    log.write(
      'warn',
      `the agent is stopping (${stopReason}): no networking restart is started after the signal; where each device stopped is recorded above`,
    );
  }
  const conclusion = concludeJob({
    ...(result === undefined ? {} : { result }),
    ...(failure === undefined ? {} : { failure }),
    configName: request.configName,
    stopped,
  });
  const end = await finishJob(job, env, {
    kind: 'result',
    carriedNotes: notes.map((n) => n.id),
    conclusion,
    header,
    result,
    stopped,
  });
  removeSecrets();
  await log.flush();
  return end;
}

/** Validation (once: the engine takes its result), the devices' locks, then the engine. */
async function applyOnce(
  job: RunningJob,
  env: JobEnvironment,
  snapshot: StickSnapshot,
  discardPending: boolean,
): Promise<{ result?: StickResult; failure?: string; removeSecrets: () => void }> {
  const { id, request, marker, log } = job;
  setStage(job, env.board, 'validating');
  const stick = await validateStick(snapshot.configFile, {
    reader: snapshotReader(env.reader, snapshot),
    label: request.configName,
    agent: env.agent,
  });
  const removeSecrets = env.redactor.add(stickSecrets(stick, env.agent));
  // The signature before any lock or request: a refused stick never reaches a device.
  setStage(job, env.board, 'checking the signature');
  const signature = await checkStickSignature(env.agent, snapshot, stick, env.signal);
  if (signature.line !== undefined)
    log.write(signature.problems.length > 0 ? 'error' : 'info', `signature: ${signature.line}`);
  if (signature.warnings.length > 0) log.writeLines(signature.warnings.map((problem) => formatProblemLine(problem)));
  if (signature.problems.length > 0) {
    log.writeLines(signature.problems.map((problem) => formatProblemLine(problem)));
    const first = signature.problems[0] as Problem;
    return {
      failure: `the stick's signature is refused (${first.file}: ${first.message}); nothing was sent to any device`,
      removeSecrets,
    };
  }
  // agent.yaml `preflight`: the switch port tried before any lock or request; its refusal ends the job.
  const port = env.agent.preflight?.port;
  if (port !== undefined && stick.model !== undefined && !hasErrors(stick.problems)) {
    setStage(job, env.board, 'preflight on the switch port');
    const said = await preflightStick({ model: stick.model, files: stick.files }, port, {
      say: (line) => log.write('info', `preflight: ${line}`),
    });
    log.write(said.passed ? 'info' : 'error', said.sentence);
    if (!said.passed) return { failure: said.sentence, removeSecrets };
  }
  const urls = (stick.model?.monitoring_points ?? []).map((mp) => normaliseDeviceUrl(mp.url) ?? mp.url);

  // Locked by the device's identity (its resolved addresses and port), not the URL's spelling:
  // https://127.0.0.1:P and https://localhost:P are one device and one job at a time.
  const keyed = await Promise.all(
    urls.map(async (url) => ({ url, keys: deviceLockKeys(url, await resolveDeviceIdentity(url)) })),
  );
  for (const { url, keys } of keyed) {
    const holder = [...env.locks.holders(keys).values()][0];
    if (holder !== undefined) log.write('info', `waiting: ${url} is being configured by job ${holder}`);
  }
  env.board?.expect(
    id,
    (stick.model?.monitoring_points ?? []).map((mp) => ({ name: mp.name, url: normaliseDeviceUrl(mp.url) ?? mp.url })),
  );
  setStage(job, env.board, 'waiting for a device');
  let release: () => void;
  try {
    release = await env.locks.acquire(
      keyed.flatMap((k) => k.keys),
      id,
      env.signal,
    );
  } catch {
    return { failure: 'the agent stopped before this job could start; nothing was sent to any device', removeSecrets };
  }
  setStage(job, env.board, 'applying');
  env.state.writeMarker(marker);
  const format = createEventFormatter();
  const announced = new Set<string>();
  try {
    const result = await applyStick(stick, {
      agent: env.agent,
      concurrency: env.agent.concurrency,
      dryRun: false,
      allowDisconnect: false,
      discardPending,
      rollback: true,
      restartTimeoutMs: env.agent.restartTimeoutMs,
      connectWindowMs: env.agent.connectWindowMs,
      signal: env.signal,
      ...serviceSideOf(env),
      onEvent: (event) => {
        // The marker first: on disk before the engine sends what the event announces.
        if (trackProgress(marker, event)) env.state.writeMarker(marker);
        env.board?.event(id, event);
        if (event.type === 'device-result') announced.add(event.result.device);
        log.writeLines(format(event));
      },
      onProblem: (problem: Problem) => log.writeLines([formatProblemLine(problem)]),
      onWarning: (message) => log.writeLines([{ level: 'warn', text: `warning: ${message}` }]),
    });
    if (result.outcome === 'invalid') log.writeLines([formatInvalidLine(request.configName, result.problems)]);
    // A device whose result came without its event (the engine's own guard against a bug) is
    // still written down: usb.log must say why each device failed.
    for (const device of result.devices) {
      if (device !== undefined && !announced.has(device.device))
        log.writeLines(format({ type: 'device-result', result: device }));
    }
    return { result, removeSecrets };
  } finally {
    release();
  }
}

/** Keeps the marker's per-device progress; true when it changed enough to be saved. */
function trackProgress(marker: JobMarker, event: ApplyEvent): boolean {
  switch (event.type) {
    case 'device-start':
      marker.devices[event.device] = { url: event.url, at: 'connecting', state: 'running' };
      return true;
    case 'step-start': {
      const device = marker.devices[event.device];
      if (device !== undefined) device.at = `step ${event.index + 1}/${event.total} ${event.description}`;
      return true;
    }
    case 'step-failed': {
      const device = marker.devices[event.device];
      if (device !== undefined) device.at = `step ${event.index + 1} ${event.description} failed: ${event.error}`;
      return true;
    }
    case 'device-result': {
      const device = marker.devices[event.result.device];
      if (device !== undefined) {
        device.state = event.result.outcome === 'failed' ? 'failed' : 'done';
        const last = event.result.lastSucceededStep;
        device.at = `${event.result.outcome}: ${event.result.message}${last === undefined ? '' : ` (last step done: ${last})`}`;
      }
      return true;
    }
    default:
      return false;
  }
}

/** The job's share of the agent's service side, for the service block the job started with. */
function serviceSideOf(env: JobEnvironment): { serviceSide?: ServiceSide } {
  const side = env.serviceSides?.sideFor(env.agent.service);
  return side === undefined ? {} : { serviceSide: side };
}
