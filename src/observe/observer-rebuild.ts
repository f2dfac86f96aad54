import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Observer, type DataApi, type NewObserver } from '../service/index.js';
import { z } from 'zod';

/**
 * Read all, DELETE, post every one back: the only way the service lets a caller change one of its
 * configurations without losing the others. What was read is written to the state folder before
 * the DELETE and removed only when every configuration is back, so a crash or a failing service in
 * between loses nothing: the next start posts the rest back from that file.
 */

const PENDING_FILE = 'observers-pending.json';
const PendingList = z.array(Observer);

export interface RebuildOptions {
  stateDir: string;
  /** Said loudly: a configuration of the caller is missing at the service until this succeeds. */
  onRetry: (sentence: string) => void;
  /** Attempts per POST before giving up (the pending file stays); default 5. */
  attempts?: number;
  /** Pause between attempts; default 2 000 ms. */
  pauseMs?: number;
}

export async function rebuildObservers(
  api: DataApi,
  postBack: readonly Observer[],
  options: RebuildOptions,
): Promise<void> {
  const file = join(options.stateDir, PENDING_FILE);
  await writeFile(file, `${JSON.stringify(postBack)}\n`, { mode: 0o600 });
  await api.deleteObservers();
  await postAll(api, postBack, options);
  await rm(file, { force: true });
}

/** Configurations a rebuild could not post back before it stopped, to post before anything else. */
export async function pendingObservers(stateDir: string): Promise<Observer[] | undefined> {
  const text = await readFile(join(stateDir, PENDING_FILE), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = PendingList.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Posts what a stopped rebuild left (a POST for a URL already back only sets the same flags again). */
export async function finishPending(api: DataApi, options: RebuildOptions): Promise<boolean> {
  const pending = await pendingObservers(options.stateDir);
  if (pending === undefined) return false;
  await postAll(api, pending, options);
  await rm(join(options.stateDir, PENDING_FILE), { force: true });
  return true;
}

async function postAll(api: DataApi, postBack: readonly Observer[], options: RebuildOptions): Promise<void> {
  const attempts = options.attempts ?? 5;
  for (const observer of postBack) {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await api.postObserver(newObserver(observer));
        break;
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        if (attempt >= attempts) throw error;
        options.onRetry(
          `the configuration for ${observer.url} is NOT at the service yet (posting it back failed: ${why}); trying again (${attempt}/${attempts}), kept in ${PENDING_FILE}`,
        );
        await new Promise((resolve) => setTimeout(resolve, options.pauseMs ?? 2_000));
      }
    }
  }
}

/** Everything GET showed except `blacklisted`, which only the service sets. */
function newObserver(observer: Observer): NewObserver {
  const { blacklisted: _blacklisted, ...rest } = observer;
  return rest;
}
