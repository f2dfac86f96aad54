import { randomBytes } from 'node:crypto';
import { constants, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { openRegularFile, readRegularTail } from './regular-file.js';

/**
 * `<state_dir>/observe-status.json`: what `mpprov status` shows of the receiver. It names the
 * public URL without the path segment: that segment is what keeps strangers' posts out.
 */
const STATUS_FILE = 'observe-status.json';

export const ObserveStatus = z.object({
  publicUrl: z.string(),
  registered: z.boolean(),
  blacklisted: z.boolean(),
  /** ISO time of the last accepted event. */
  lastEventAt: z.string().nullable(),
  /** ISO time of the last GET /v3/observer. */
  checkedAt: z.string().nullable(),
});
export type ObserveStatus = z.infer<typeof ObserveStatus>;

export async function writeObserveStatus(stateDir: string, status: ObserveStatus): Promise<void> {
  const file = join(stateDir, STATUS_FILE);
  // A name of its own per write: an event and the periodic check may write at the same moment.
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await openRegularFile(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
  try {
    await handle.writeFile(`${JSON.stringify(status)}\n`);
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
}

export async function readObserveStatus(stateDir: string): Promise<ObserveStatus | undefined> {
  const text = await readRegularTail(join(stateDir, STATUS_FILE), 64 * 1024);
  if (text === '') return undefined;
  try {
    const parsed = ObserveStatus.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
