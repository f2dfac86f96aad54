import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

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
  await writeFile(`${file}.tmp`, `${JSON.stringify(status)}\n`, { mode: 0o644 });
  await rename(`${file}.tmp`, file);
}

export async function readObserveStatus(stateDir: string): Promise<ObserveStatus | undefined> {
  const text = await readFile(join(stateDir, STATUS_FILE), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = ObserveStatus.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
