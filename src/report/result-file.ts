import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceDurably, type WriteTarget } from '../core/durable-write.js';
import { visibleText as v } from '../core/visible-text.js';
import type { JobConclusion } from './job-log-format.js';

/**
 * The one-glance result at the stick's root, readable on any OS without a terminal: while a job
 * runs the stick holds MPPROV-BUSY.TXT; when it ends, exactly one of MPPROV-OK.TXT,
 * MPPROV-NO-CHANGE.TXT or MPPROV-FAILED.TXT with a one-paragraph summary. Upper-case 8.3-style
 * names, because that is how a FAT stick shows them everywhere anyway. CRLF line ends: Notepad.
 * Every file is written as a temporary file renamed into place (never O_TRUNC: fusefat breaks).
 */

export const RESULT_TXT = {
  busy: 'MPPROV-BUSY.TXT',
  ok: 'MPPROV-OK.TXT',
  noChange: 'MPPROV-NO-CHANGE.TXT',
  failed: 'MPPROV-FAILED.TXT',
} as const;
export type ResultTxtName = (typeof RESULT_TXT)[keyof typeof RESULT_TXT];
const RESULT_TXT_NAMES: readonly ResultTxtName[] = Object.values(RESULT_TXT);

/** Which file a RESULT word gets: CHANGED and OK (mixed, nothing failed) both mean "done, fine". */
export function resultTxtName(word: JobConclusion['word']): ResultTxtName {
  if (word === 'FAILED') return RESULT_TXT.failed;
  if (word === 'NO CHANGE') return RESULT_TXT.noChange;
  return RESULT_TXT.ok;
}

const hhmm = (at: Date): string =>
  `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;

export function busyText(since: Date, jobId: string): string {
  return `mpprov is working on this stick since ${hhmm(since)}; do not remove it. (job ${jobId})\r\n`;
}

/**
 * The summary paragraph. It is built from the conclusion's summary, which is made of device names,
 * outcomes and error words only; the caller passes it through the job's redactor all the same.
 * The label, the file name and the names in the summary are the stick's and the devices' text:
 * escaped (visibleText), so the paragraph stays one line and holds no control character.
 */
export function resultText(input: {
  conclusion: JobConclusion;
  jobId: string;
  finished: Date;
  label: string;
  configName: string;
  /**
   * What became of the stick (stick-release.ts), once known. Written before the agent unmounts it,
   * the file cannot know that the unmount will succeed, so it never says "safe to remove"; after
   * an unmount that failed it is written again with that sentence.
   */
  release?: string;
}): string {
  const { conclusion } = input;
  // The failure table's reason and action where one applies (failure-reasons.ts), else the general one.
  const advice =
    conclusion.advice ??
    `What to do: read usb.log on this stick (its last section, job ${input.jobId}) for the reason, fix ${v(input.configName)} or the device it names, and insert the stick again; a device that is already configured is not restarted again.`;
  const release = input.release ?? 'Results written and synced.';
  const what =
    conclusion.word === 'FAILED'
      ? `${advice}${input.release === undefined ? '' : ` ${input.release}`}`
      : `${conclusion.advice === undefined ? '' : `${conclusion.advice} `}${release}`;
  return (
    `mpprov ${conclusion.word} at ${hhmm(input.finished)} (stick ${v(input.label)}, ${v(input.configName)}, job ${input.jobId}): ${v(conclusion.summary)}. ${what}\r\n` +
    'Details: usb.log and mpprov-result.json on this stick.\r\n'
  );
}

/** Every MPPROV-*.TXT result file at `root`, as listed (a FAT listing may show any case). */
async function listedResultFiles(root: string): Promise<string[]> {
  const wanted = new Set(RESULT_TXT_NAMES.map((n) => n.toLowerCase()));
  return (await readdir(root)).filter((name) => wanted.has(name.toLowerCase()));
}

/**
 * Writes `name` with `text` at `root` and removes every other result file, in this order: the
 * results of an earlier run go first (a stick pulled then shows BUSY alone); BUSY goes last, once
 * the new result is in place (never a stick with no word on it at all).
 */
export async function writeResultTxt(
  root: string,
  name: ResultTxtName,
  text: string,
  target: WriteTarget = {},
): Promise<void> {
  const others = (await listedResultFiles(root)).filter((n) => n.toLowerCase() !== name.toLowerCase());
  const busy = others.filter((n) => n.toLowerCase() === RESULT_TXT.busy.toLowerCase());
  const older = others.filter((n) => !busy.includes(n));
  for (const old of older) await unlinkIfThere(join(root, old));
  // The file itself is replaced by a temporary file renamed over it, so no unlink is needed.
  await replaceDurably(join(root, name), text, target);
  for (const old of busy) await unlinkIfThere(join(root, old));
}

async function unlinkIfThere(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
