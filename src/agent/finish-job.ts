import type { StickResult } from '../apply/index.js';
import type { AgentConfig } from '../config/index.js';
import type { Redactor } from '../core/redact.js';
import {
  formatResultLine,
  type JobConclusion,
  type JobHeader,
  type JobLog,
  resultDocument,
  resultText,
  releaseSentence,
  resultTxtName,
  type StickRelease,
  stickProblemText,
} from '../report/index.js';
import { StickProblem } from '../core/stick-problem.js';
import { endOnBoard, setStage } from './board-feed.js';
import type { JobBoard } from './job-board.js';
import { releaseStick } from './release-stick.js';
import type { JobMarker, StateStore } from './state-store.js';

/**
 * The end of a job, written once for both ways a job ends: the RESULT line and the result files,
 * usb.log flushed, the stick's log settled, the stick released, the job settled, the board told,
 * the history's end record, the running marker. The order is the contract: a stick is released
 * only once everything is on it, and the banner changes only once the stick is released.
 */

/** What the end needs of a job (run-job.ts's RunningJob fits). */
export interface FinishingJob {
  readonly id: string;
  readonly request: { kind: 'stick' | 'profile'; root: string; configName: string; label: string };
  readonly marker: JobMarker;
  readonly log: JobLog;
}

/** What the end needs of the job's environment (run-job.ts's JobEnvironment fits). */
export interface FinishEnvironment {
  agent: Pick<AgentConfig, 'whenDone'>;
  state: StateStore;
  redactor: Redactor;
  hostname: string;
  version: string;
  stickQueue: (root: string) => <T>(write: () => Promise<T>) => Promise<T>;
  onSettled?: (() => void) | undefined;
  stickInUse?: ((root: string, id: string) => boolean) | undefined;
  board?: JobBoard | undefined;
}

/** Runs one step of the end: as is, or (after an internal error) logged and passed when it throws. */
export type EndStep = (what: string, step: () => unknown) => Promise<void>;

/**
 * How the job ends. `result`: the job came to its own conclusion; its carried notes are settled
 * and its stick may be released. `internal-error`: something threw outside the engine's guard;
 * the state folder or the stick may be what failed, so no note is touched, the stick is not
 * released, the board is left to the daemon (it abandons the banner), and every step is tried on
 * its own through `step`.
 */
export type JobEnding = {
  conclusion: JobConclusion;
  header: JobHeader;
  result?: StickResult | undefined;
  stopped: boolean;
} & ({ kind: 'result'; carriedNotes: readonly string[] } | { kind: 'internal-error'; summary: string; step: EndStep });

export interface JobEnd {
  conclusion: JobConclusion;
  /** `complete`, `none` (profile), or what happened to the stick. */
  stickLog: string;
}

/** The marker's stage from the moment a job's RESULT line is on its way to usb.log. */
export const FINISHING = 'finishing';

/** The marker's stage while the agent unmounts the stick itself (the daemon says nothing of that unmount). */
export const RELEASING = 'releasing the stick';

/** The header of a job's log and result: who ran what, from where, when. */
export function jobHeader(
  job: Pick<FinishingJob, 'id' | 'request'>,
  env: Pick<FinishEnvironment, 'hostname' | 'version'>,
  started: Date,
  configSha256: string,
): JobHeader {
  const { id, request } = job;
  return {
    jobId: id,
    started,
    agentVersion: env.version,
    hostname: env.hostname,
    source: request.kind,
    label: request.label,
    location: request.root,
    configName: request.configName,
    configSha256,
  };
}

const asIs: EndStep = async (_what, step) => {
  await step();
};

/** The end of a job, from its RESULT line to its running marker; see JobEnding for the two kinds. */
export async function finishJob(job: FinishingJob, env: FinishEnvironment, ending: JobEnding): Promise<JobEnd> {
  const { id, request, marker, log } = job;
  const { conclusion, header, result, stopped } = ending;
  const internal = ending.kind === 'internal-error';
  const step = internal ? ending.step : asIs;
  const board = internal ? undefined : env.board;
  // Already FINISHING here means the first end got its RESULT out before it threw: that result stands.
  const resultWritten = marker.stage === FINISHING;
  setStage(job, board, FINISHING);
  const finished = new Date();
  if (internal && resultWritten) {
    await step('the usb.log line', () =>
      log.write('error', `${ending.summary}; the result above stands, but the job's bookkeeping did not finish`),
    );
  } else {
    await step('the RESULT line', () => {
      log.stick?.setTrailer(undefined);
      // usb.log's summary: the reason and the action on site, just above the RESULT line.
      if (conclusion.advice !== undefined)
        log.write(conclusion.word === 'FAILED' ? 'error' : 'warn', conclusion.advice);
      log.result(formatResultLine(conclusion, id), conclusion.word === 'FAILED' ? 'error' : 'info');
      log.writeResult(
        resultDocument({ header, finished, conclusion, ...(result === undefined ? {} : { result }), stopped }),
      );
      log.stick?.writeResultTxt(
        resultTxtName(conclusion.word),
        env.redactor.text(
          resultText({ conclusion, jobId: id, finished, label: request.label, configName: request.configName }),
        ),
      );
    });
  }
  await step('writing usb.log', () => log.flush());

  const stickLog = internal ? stickLogState(log) : await settleStickLog(job, env, header, ending.carriedNotes);
  const release = request.kind === 'stick' && !internal ? await releaseOrKeep(job, env, stickLog) : undefined;
  if (release?.kind === 'kept') {
    // Still mounted: the result file gets the truth about it (it never said "safe to remove").
    await step('the result file again', async () => {
      log.stick?.writeResultTxt(
        resultTxtName(conclusion.word),
        env.redactor.text(
          resultText({
            conclusion,
            jobId: id,
            finished,
            label: request.label,
            configName: request.configName,
            release: releaseSentence(release),
          }),
        ),
      );
      await log.flush();
    });
  }
  await step('settling the job', () => env.onSettled?.());
  // Only now, with the result written, usb.log synced and the stick released, does the banner change.
  endOnBoard(job, board, {
    kind: request.kind,
    label: request.label,
    configName: request.configName,
    conclusion,
    finished,
    localLog: log.localFile,
    release,
  });
  await step('the history record', () =>
    env.state.appendHistory({
      event: 'end',
      id,
      time: new Date().toISOString(),
      result: conclusion.word,
      summary: conclusion.summary,
      outcome: internal ? 'internal-error' : (result?.outcome ?? 'not-run'),
      stopped,
      devices: (result?.devices ?? [])
        .filter((d) => d !== undefined)
        .map((d) => ({
          name: d.device,
          url: d.url,
          outcome: d.outcome,
          ...(d.code === undefined ? {} : { code: d.code }),
        })),
      log: log.localFile,
      stick_log: stickLog,
    }),
  );
  if (stopped) {
    // Kept on purpose: the next start reports where this job stopped, and so does this stick's usb.log.
    marker.ended = true;
    env.state.writeMarker(marker);
  } else {
    await step('removing the running marker', () => env.state.removeMarker(id));
  }
  return { conclusion, stickLog };
}

/** What usb.log got, read from its writer alone (no state folder involved). */
function stickLogState(log: JobLog): string {
  const stick = log.stick;
  if (stick === undefined) return 'none';
  const status = stick.status();
  if (!status.ok) return status.problem;
  return stick.unwritten() === '' ? 'complete' : 'failed';
}

/**
 * After the job: did usb.log get everything? If not, what it lacks waits as a note for the next
 * time this stick is seen, and the notes this job carried are settled either way.
 */
async function settleStickLog(
  job: FinishingJob,
  env: FinishEnvironment,
  header: JobHeader,
  carriedNotes: readonly string[],
): Promise<string> {
  const stick = job.log.stick;
  if (stick === undefined) return 'none';
  const status = stick.status();
  const unwritten = stick.unwritten();
  await env.state.removeNotes(carriedNotes);
  if (status.ok && unwritten === '') return 'complete';
  const problem = status.ok ? 'failed' : status.problem;
  const why = status.ok ? 'the stick could not be written' : stickProblemText(status.problem);
  job.log.writeLocal(
    'warn',
    `usb.log is incomplete: ${why}; the full log is kept in ${job.log.localFile}, and the rest is written to the stick when it is next seen`,
  );
  if (unwritten !== '') {
    await env.state.addNote({
      id: job.id,
      kind: 'unwritten',
      created: new Date().toISOString(),
      label: header.label,
      config_sha256: header.configSha256,
      text: `\nNOTE [${job.id}] what follows could not be written to this stick at the time (${why}); written late:\n${unwritten}`,
    });
  }
  return problem;
}

/**
 * What becomes of the stick: pulled before its result was on it, not written, kept mounted (by
 * agent.yaml, another job, or an unmount that failed), or released. Only a stick whose every write
 * succeeded is released: one that failed keeps its mount, its owed text waits for the next insertion.
 */
async function releaseOrKeep(job: FinishingJob, env: FinishEnvironment, stickLog: string): Promise<StickRelease> {
  if (stickLog === StickProblem.Removed) return { kind: 'pulled' };
  if (stickLog !== 'complete') {
    const problem = Object.values(StickProblem).find((p) => p === stickLog);
    return { kind: 'unwritten', why: problem === undefined ? 'it could not be written' : stickProblemText(problem) };
  }
  if (!env.agent.whenDone.eject) return { kind: 'kept', why: "agent.yaml's when_done.eject is false" };
  return release(job, env);
}

/** Everything is on the stick and synced: unmount it (and power it off with udisks2), so it disappears from the file manager. */
async function release(job: FinishingJob, env: FinishEnvironment): Promise<StickRelease> {
  const root = job.request.root;
  // Another job on the same stick (re-inserted with another configuration) keeps it mounted.
  if (env.stickInUse?.(root, job.id) === true) {
    job.log.writeLocal('info', `the stick at ${root} is not released: another job still uses it`);
    return { kind: 'kept', why: 'another job still uses it' };
  }
  await env.stickQueue(root)(() => Promise.resolve());
  setStage(job, env.board, RELEASING);
  const outcome = await releaseStick(root);
  if (outcome.released) {
    job.log.writeLocal('info', `the stick at ${root} is released (${outcome.how}): safe to remove`);
    return { kind: 'released', how: outcome.how };
  }
  job.log.writeLocal(
    'warn',
    `the stick at ${root} was not released: ${outcome.why}; unmount it from the desktop before pulling it`,
  );
  return { kind: 'kept', why: outcome.why };
}
