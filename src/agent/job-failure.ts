import type { AgentLogger } from '../report/index.js';
import { concludeJob } from '../report/index.js';
import {
  type EndStep,
  type FinishEnvironment,
  type FinishingJob,
  finishJob,
  type JobEnd,
  jobHeader,
} from './finish-job.js';

export interface FailureEnvironment extends FinishEnvironment {
  logger: AgentLogger;
}

/**
 * A job that threw outside the engine's own guard (the snapshot, the header, settling usb.log,
 * releasing the stick, the state folder's history or notes) still ends as that job's failure, as
 * far as each part can still be written: a RESULT FAILED line, mpprov-result.json and
 * MPPROV-FAILED.TXT when the result was not written yet (else an ERROR line after it), the
 * history's end record, and the running marker removed, so the next start does not take the job
 * for a crash and refuse the stick. Never throws: it is the last guard of a job.
 */
export async function failJob(job: FinishingJob, env: FailureEnvironment, error: unknown): Promise<JobEnd> {
  const { id, request, marker } = job;
  const reason = error instanceof Error ? error.message : String(error);
  const summary = `internal error in the job: ${reason}`;
  const attempt: EndStep = async (what, step) => {
    try {
      await step();
    } catch (failure) {
      env.logger.log('error', `${what} after an internal error failed too: ${(failure as Error).message}`, id);
    }
  };
  // The journal gets the stack (through the agent's redactor, like every line); usb.log the sentence.
  env.logger.log('error', `internal error: ${(error as Error).stack ?? reason}`, id);
  const end = await finishJob(job, env, {
    kind: 'internal-error',
    summary,
    step: attempt,
    conclusion: concludeJob({ failure: summary, configName: request.configName, stopped: false }),
    header: jobHeader(job, env, new Date(marker.started), marker.source.config_sha256),
    stopped: false,
  });
  await attempt('removing the stick copy', () => env.state.removeJobDir(id));
  return end;
}
