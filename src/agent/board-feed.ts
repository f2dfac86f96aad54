import { type JobConclusion, releaseSentence, resultText, type StickRelease } from '../report/index.js';
import type { JobBoard } from './job-board.js';

/**
 * What run-job.ts tells the job board, kept out of run-job.ts: the stage (on the marker and the
 * board at once), and the end with the summary and advice of MPPROV-*.TXT.
 */

interface FedJob {
  readonly id: string;
  readonly marker: { stage: string };
}

/** The job's stage, on its marker and on the board. */
export function setStage(job: FedJob, board: JobBoard | undefined, stage: string): void {
  job.marker.stage = stage;
  board?.stage(job.id, stage);
}

export interface EndFacts {
  kind: 'stick' | 'profile';
  label: string;
  configName: string;
  conclusion: JobConclusion;
  finished: Date;
  localLog: string;
  /** A stick's: what became of it after its job (undefined for a profile, or after an internal error). */
  release?: StickRelease | undefined;
}

/**
 * The board's end of a job. A stick's summary is the paragraph of its MPPROV-*.TXT, split at
 * "What to do:" so that the advice stands on its own (the page's FAILED banner shows it first).
 */
export function endOnBoard(job: FedJob, board: JobBoard | undefined, facts: EndFacts): void {
  if (board === undefined) return;
  const { conclusion } = facts;
  let summary: string;
  let advice: string | undefined;
  if (facts.kind === 'stick') {
    const paragraph =
      resultText({
        conclusion,
        jobId: job.id,
        finished: facts.finished,
        label: facts.label,
        configName: facts.configName,
        ...(facts.release === undefined ? {} : { release: releaseSentence(facts.release) }),
      }).split('\r\n')[0] ?? '';
    const at = paragraph.indexOf(' What to do: ');
    summary = at < 0 ? paragraph : paragraph.slice(0, at);
    if (at >= 0) advice = paragraph.slice(at + 1);
  } else {
    summary = `mpprov ${conclusion.word} (profile ${facts.label}, job ${job.id}): ${conclusion.summary}.`;
    if (conclusion.word === 'FAILED')
      advice = `What to do: read the job's log (${facts.localLog}) for the reason, fix ${facts.configName} or the device it names, and save it again.`;
  }
  const release = facts.release;
  board.end(job.id, {
    result: conclusion.word,
    summary,
    advice,
    released: release === undefined ? undefined : release.kind === 'released',
    ...(release === undefined ? {} : { removal: { kind: release.kind, sentence: releaseSentence(release) } }),
    finished: new Date(),
  });
}
