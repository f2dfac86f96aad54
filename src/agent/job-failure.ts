import type { Redactor } from '../core/redact.js';
import {
  type AgentLogger,
  concludeJob,
  type JobConclusion,
  type JobHeader,
  type JobLog,
  formatResultLine,
  resultDocument,
  resultText,
  resultTxtName,
} from '../report/index.js';
import type { JobMarker, StateStore } from './state-store.js';

/** What failJob needs of a job and its environment (run-job.ts's RunningJob and JobEnvironment fit). */
export interface FailingJob {
  readonly id: string;
  readonly request: { kind: 'stick' | 'profile'; root: string; configName: string; label: string };
  readonly marker: JobMarker;
  readonly log: JobLog;
}

export interface FailureEnvironment {
  state: StateStore;
  logger: AgentLogger;
  redactor: Redactor;
  hostname: string;
  version: string;
  onSettled?: () => void;
}

/** The header of a job's log and result: who ran what, from where, when. */
export function jobHeader(
  job: FailingJob,
  env: Pick<FailureEnvironment, 'hostname' | 'version'>,
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

/** The marker's stage from the moment a job's RESULT line is on its way to usb.log. */
export const FINISHING = 'finishing';

/**
 * A job that threw outside the engine's own guard (the snapshot, the header, settling usb.log,
 * releasing the stick, the state folder's history or notes) still ends as that job's failure, as
 * far as each part can still be written: a RESULT FAILED line, mpprov-result.json and
 * MPPROV-FAILED.TXT when the result was not written yet (else an ERROR line after it), the
 * history's end record, and the running marker removed, so the next start does not take the job
 * for a crash and refuse the stick. Never throws: it is the last guard of a job.
 */
export async function failJob(
  job: FailingJob,
  env: FailureEnvironment,
  error: unknown,
): Promise<{ conclusion: JobConclusion; stickLog: string }> {
  const { id, request, marker, log } = job;
  const reason = error instanceof Error ? error.message : String(error);
  const summary = `internal error in the job: ${reason}`;
  const attempt = async (what: string, step: () => unknown): Promise<void> => {
    try {
      await step();
    } catch (failure) {
      env.logger.log('error', `${what} after an internal error failed too: ${(failure as Error).message}`, id);
    }
  };
  // The journal gets the stack (through the agent's redactor, like every line); usb.log the sentence.
  env.logger.log('error', `internal error: ${(error as Error).stack ?? reason}`, id);
  const conclusion: JobConclusion = concludeJob({ failure: summary, configName: request.configName, stopped: false });
  const resultWritten = marker.stage === FINISHING;
  marker.stage = FINISHING;
  const finished = new Date();
  if (resultWritten) {
    await attempt('the usb.log line', () =>
      log.write('error', `${summary}; the result above stands, but the job's bookkeeping did not finish`),
    );
  } else {
    await attempt('the RESULT line', () => {
      const header = jobHeader(job, env, new Date(marker.started), marker.source.config_sha256);
      log.stick?.setTrailer(undefined);
      log.result(formatResultLine(conclusion, id), 'error');
      log.writeResult(resultDocument({ header, finished, conclusion, stopped: false }));
      log.stick?.writeResultTxt(
        resultTxtName(conclusion.word),
        env.redactor.text(
          resultText({ conclusion, jobId: id, finished, label: request.label, configName: request.configName }),
        ),
      );
    });
  }
  await attempt('writing usb.log', () => log.flush());
  const stick = log.stick;
  const stickLog =
    stick === undefined
      ? 'none'
      : stick.status().ok && stick.unwritten() === ''
        ? 'complete'
        : stick.status().ok
          ? 'failed'
          : (stick.status() as { problem: string }).problem;
  await attempt('settling the job', () => env.onSettled?.());
  await attempt('the history record', () =>
    env.state.appendHistory({
      event: 'end',
      id,
      time: finished.toISOString(),
      result: conclusion.word,
      summary: conclusion.summary,
      outcome: 'internal-error',
      stopped: false,
      devices: [],
      log: log.localFile,
      stick_log: stickLog,
    }),
  );
  await attempt('removing the running marker', () => env.state.removeMarker(id));
  await attempt('removing the stick copy', () => env.state.removeJobDir(id));
  return { conclusion, stickLog };
}
