import { constants, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { followLines } from './jsonl-follower.js';
import { openRegularFile } from './regular-file.js';

/**
 * `<state_dir>/poll-confirmations.jsonl`: a run on this host (apply, the agent) appends a line
 * when a poll round, not an event, confirmed that an MP it saw down came back AVAILABLE, and it
 * had read no AVAILABLE event for that MP since. `mpprov observe` follows the file and judges,
 * after a grace, whether the event ever came (missed-events.ts): a service that confirms MPs
 * without telling the receiver has most likely blacklisted it. Only hostnames and times: no
 * secret, and small (past MAX_BYTES the file becomes `.1`, the one before dropped).
 */

export const CONFIRMATIONS_FILE = 'poll-confirmations.jsonl';
export const MAX_CONFIRMATIONS_BYTES = 64 * 1024;

export const PollConfirmation = z.object({
  hostname: z.string().min(1).max(253),
  /** Epoch ms of the answer that last listed the MP as not AVAILABLE: its event comes after. */
  downSeenAt: z.number(),
  /** Epoch ms of the round's answer that listed it AVAILABLE. */
  confirmedAt: z.number(),
});
export type PollConfirmation = z.infer<typeof PollConfirmation>;

export async function appendPollConfirmation(
  stateDir: string,
  confirmation: PollConfirmation,
  maxBytes: number = MAX_CONFIRMATIONS_BYTES,
): Promise<void> {
  const file = join(stateDir, CONFIRMATIONS_FILE);
  const size = await stat(file).then(
    (s) => s.size,
    () => 0,
  );
  if (size >= maxBytes) await rename(file, `${file}.1`);
  // Never through a symlink or into a FIFO planted in the file's place (the agent runs as root).
  const handle = await openRegularFile(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT);
  try {
    await handle.write(`${JSON.stringify(PollConfirmation.parse(confirmation))}\n`);
  } finally {
    await handle.close();
  }
}

/** Calls `onConfirmation` for each well-formed line appended after the start; anything else is skipped. */
export function followPollConfirmations(
  stateDir: string,
  onConfirmation: (confirmation: PollConfirmation) => void,
  everyMs?: number,
): () => void {
  return followLines(
    join(stateDir, CONFIRMATIONS_FILE),
    (line) => {
      try {
        const parsed = PollConfirmation.safeParse(JSON.parse(line));
        if (parsed.success) onConfirmation(parsed.data);
      } catch {
        // A line cut by a crash mid-write: the next ones are still good.
      }
    },
    everyMs,
  );
}
