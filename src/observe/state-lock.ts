import { constants, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MpprovError } from '../core/errors.js';
import { openRegularFile } from './regular-file.js';
import { processAlive } from '../core/process-alive.js';

/**
 * One `mpprov observe` (receiver, --unregister or --take-over) per state folder at a time: two
 * would rebuild the caller's configurations over each other, share one pending file, and a running
 * receiver would register again what an --unregister beside it just removed.
 */
const LOCK_FILE = 'observe.lock';

export async function lockStateDir(stateDir: string): Promise<() => Promise<void>> {
  const file = join(stateDir, LOCK_FILE);
  for (let attempt = 0; ; attempt += 1) {
    try {
      const handle = await openRegularFile(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return () => rm(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
    }
    const holder = Number.parseInt(await readFile(file, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(holder) && holder > 0 && processAlive(holder))
      throw new MpprovError(
        ErrorCode.ObserveBusy,
        `another mpprov observe (pid ${holder}) uses ${stateDir}: stop it first (systemctl stop mpprov-observe)`,
      );
    // Left by a process that is gone (killed): its lock means nothing now.
    await rm(file, { force: true });
  }
}
