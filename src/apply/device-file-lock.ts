import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { deviceLockKeys, resolveDeviceIdentity } from '../client/index.js';
import { ErrorCode, MpprovError } from '../core/errors.js';
import { makeFolder } from '../core/make-folder.js';
import { visibleText } from '../core/visible-text.js';
import { holdFlock } from './flock-holder.js';

/**
 * One run at a time per Monitoring Point, across processes and controllers: a lock file per device
 * key in `<state_dir>/locks/`, held with flock(2) for the whole of the device's read, plan, apply,
 * restart and verify. Two controllers that share the state folder (AWX jobs on a shared volume,
 * NFS: Linux maps flock to NFS byte-range locks) therefore never interleave on one MP; the second
 * waits, then plans against what the first left (usually nothing to do).
 *
 * The locks are held by one helper process for the whole run (flock-holder.ts), not a process per
 * device, and go with this process: ending in any way (a crash, SIGKILL) frees every device, so a
 * dead run never leaves a stale lock behind. They are plain flock(2) locks, so flock(1) and older
 * mpprov versions meet them. The holder's description is written into the file, so that a run
 * that gives up waiting can name the run it waited for.
 */

export interface DeviceLockOptions {
  stateDir: string;
  /** How long to wait for another run's lock before failing the device. */
  waitMs: number;
  /** What this run is, written into the lock file for a run that waits (e.g. "mpprov apply FILE"). */
  run: string;
  signal?: AbortSignal | undefined;
}

/** The lock folder in a state directory. */
export function lockFolder(stateDir: string): string {
  return join(stateDir, 'locks');
}

/**
 * Takes the lock of each key (sorted, so two runs on devices sharing keys cannot deadlock) and
 * returns the function that frees them. Throws an MpprovError (MPPROV_DEVICE_BUSY) naming the run
 * that holds a lock when the wait runs out.
 */
export async function lockDevice(keys: readonly string[], options: DeviceLockOptions): Promise<() => Promise<void>> {
  const folder = lockFolder(options.stateDir);
  // Not Node's recursive mkdir, which never returns under /proc or /sys (a state_dir or
  // --state-dir there held `apply --lock-wait` forever before any device). As mkdir's own mode.
  await makeFolder(folder, 0o777);
  const held: (() => Promise<void>)[] = [];
  const release = async (): Promise<void> => {
    for (const free of held.reverse()) await free();
  };
  try {
    for (const key of [...new Set(keys)].sort()) held.push(await lockOne(join(folder, lockFileName(key)), options));
  } catch (error) {
    await release();
    throw error;
  }
  return release;
}

/** A device key (`https://192.0.2.10:8443`) as a file name: letters, digits, dots and dashes only. */
export function lockFileName(key: string): string {
  return `${key.replace(/^https:\/\//, '').replace(/[^A-Za-z0-9.-]/g, '_')}.lock`;
}

async function lockOne(file: string, options: DeviceLockOptions): Promise<() => Promise<void>> {
  // Whole seconds, as `--lock-wait` and the sentence below count them.
  const waitS = Math.max(0, Math.ceil(options.waitMs / 1000));
  const taken = await holdFlock(file, { waitMs: waitS * 1000, signal: options.signal });
  if (taken.kind === 'locked') {
    const holder = `${options.run} on ${hostname()} (pid ${process.pid}) since ${new Date().toISOString()}`;
    // The description is a courtesy for a waiting run; a file that cannot be written still locks.
    await writeFile(file, `${holder}\n`).catch(() => undefined);
    return taken.free;
  }
  if (taken.kind === 'stopped')
    throw new MpprovError(ErrorCode.DeviceBusy, 'stopped while waiting for the device lock; nothing was sent');
  if (taken.kind === 'busy') {
    const holder = await holderOf(file);
    throw new MpprovError(
      ErrorCode.DeviceBusy,
      `another run holds this device's lock (${holder}) and did not finish within ${waitS} s; this run sent nothing to it`,
    );
  }
  throw new MpprovError(
    ErrorCode.DeviceBusy,
    `the device lock ${file} could not be taken (${taken.reason}); this run sent nothing to it`,
  );
}

async function holderOf(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const line = text.split('\n')[0]?.trim().slice(0, 300) ?? '';
  return line === '' ? `the lock file ${file}` : visibleText(line);
}

export interface DeviceLockSettings {
  stateDir: string;
  waitMs: number;
  run: string;
}

/** The lock of the device a URL reaches, or the sentence saying why this run may not touch it. */
export async function lockDeviceAt(
  url: string,
  settings: DeviceLockSettings,
  signal?: AbortSignal,
): Promise<{ release: () => Promise<void> } | { failure: string }> {
  const identity = await resolveDeviceIdentity(url).catch(() => undefined);
  const keys = identity === undefined ? [url] : deviceLockKeys(url, identity);
  try {
    return { release: await lockDevice(keys, { ...settings, signal }) };
  } catch (error) {
    return { failure: error instanceof Error ? error.message : String(error) };
  }
}
