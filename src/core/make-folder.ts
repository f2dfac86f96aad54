import { mkdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p` without Node's `recursive: true`, which never returns where the file system refuses a
 * new folder with ENOENT although its parent exists (/proc, /sys): it makes the parent again, and
 * tries again, forever at full CPU. A state_dir such as /proc/mpprov hung the agent's start that
 * way, and a reload to it every later reload and the stop. Here the folder is made at once when its
 * parent is there; else each missing folder is made once, from the top down, with `mode`, and the
 * first refusal is thrown as it came (ENOENT, ENOTDIR, EACCES).
 * Returns the first folder it made, as Node's does, or undefined when the whole path was there.
 */
export function makeFolderSync(path: string, mode: number): string | undefined {
  // The folder itself first: where its parent is there (the common case, a file's folder made again
  // for each file of a stick) one call answers.
  const leaf = attempt(() => mkdirSync(path, { mode }), true);
  if (leaf !== 'ENOENT') return leaf === 'made' ? resolve(path) : undefined;
  let first: string | undefined;
  for (const folder of lineage(path))
    if (attempt(() => mkdirSync(folder, { mode }), false) === 'made') first ??= folder;
  return first;
}

/** makeFolderSync, asynchronous. */
export async function makeFolder(path: string, mode: number): Promise<string | undefined> {
  const leaf = await attemptAsync(() => mkdir(path, { mode }), true);
  if (leaf !== 'ENOENT') return leaf === 'made' ? resolve(path) : undefined;
  let first: string | undefined;
  for (const folder of lineage(path))
    if ((await attemptAsync(() => mkdir(folder, { mode }), false)) === 'made') first ??= folder;
  return first;
}

/** `made`, `EEXIST` (there already), or `ENOENT` (a parent missing) where `parentMayBeMissing`; any other refusal is thrown. */
type Attempt = 'made' | 'EEXIST' | 'ENOENT';

function outcomeOf(error: unknown, parentMayBeMissing: boolean): Attempt {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EEXIST' || (parentMayBeMissing && code === 'ENOENT')) return code;
  throw error;
}

function attempt(make: () => unknown, parentMayBeMissing: boolean): Attempt {
  try {
    make();
    return 'made';
  } catch (error) {
    return outcomeOf(error, parentMayBeMissing);
  }
}

async function attemptAsync(make: () => Promise<unknown>, parentMayBeMissing: boolean): Promise<Attempt> {
  try {
    await make();
    return 'made';
  } catch (error) {
    return outcomeOf(error, parentMayBeMissing);
  }
}

/** The folder and its parents, the root first. */
function lineage(path: string): string[] {
  const out: string[] = [];
  for (let at = resolve(path); ; at = dirname(at)) {
    out.unshift(at);
    if (dirname(at) === at) return out;
  }
}
