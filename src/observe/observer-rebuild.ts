import { constants, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { OBSERVER_KINDS, Observer, type DataApi, type NewObserver, type ObserverKind } from '../service/index.js';
import { z } from 'zod';
import { ErrorCode, MpprovError } from '../core/errors.js';
import { openRegularFile, readRegularTail } from './regular-file.js';

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
  const clash = impossibleList(postBack);
  // Such a list is no caller's own (a confused or hostile answer): posting it back would stop at the
  // clash with every configuration after it, this receiver's included, left deleted.
  if (clash !== undefined)
    throw new MpprovError(
      ErrorCode.ServiceResponse,
      `GET /v3/observer listed ${clash}, which the service never holds for one caller: nothing deleted`,
    );
  const file = join(options.stateDir, PENDING_FILE);
  await writeWhole(file, `${JSON.stringify(postBack)}\n`);
  await api.deleteObservers();
  await postAll(api, postBack, options);
  await rm(file, { force: true });
}

/** Configurations a rebuild could not post back before it stopped, to post before anything else. */
export async function pendingObservers(stateDir: string): Promise<Observer[] | undefined> {
  const file = join(stateDir, PENDING_FILE);
  const text = await readRegularTail(file, PENDING_MAX_BYTES);
  if (text === '') return undefined;
  let parsed: ReturnType<typeof PendingList.safeParse> | undefined;
  try {
    parsed = PendingList.safeParse(JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  // Ignoring it would let the next rebuild write over the only copy of configurations the service lost.
  if (parsed?.success !== true)
    throw new MpprovError(
      ErrorCode.StateFileRefused,
      `${file} is damaged: the configurations it keeps for posting back cannot be read; repair or remove it, then start again`,
    );
  return parsed.data;
}

const PENDING_MAX_BYTES = 4 * 1024 * 1024;

/** Written whole or not at all: a crash mid-write must not leave half a list where the only copy was. */
async function writeWhole(file: string, text: string): Promise<void> {
  const handle = await openRegularFile(`${file}.tmp`, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(`${file}.tmp`, file);
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

/** What in a list to post back the service would refuse (a URL twice, a kind on two servers), if anything. */
function impossibleList(observers: readonly Observer[]): string | undefined {
  const urls = new Set<string>();
  const kinds = new Set<ObserverKind>();
  for (const observer of observers) {
    if (urls.has(observer.url)) return `${observer.url} twice`;
    urls.add(observer.url);
    for (const kind of OBSERVER_KINDS.filter((k) => observer[k] === true)) {
      if (kinds.has(kind)) return `${kind} for two servers`;
      kinds.add(kind);
    }
  }
  return undefined;
}

/** Everything GET showed except `blacklisted`, which only the service sets. */
export function newObserver(observer: Observer): NewObserver {
  const { blacklisted: _blacklisted, ...rest } = observer;
  return rest;
}
