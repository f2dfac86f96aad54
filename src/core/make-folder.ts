import { mkdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p` without Node's `recursive: true`, which never returns where the file system refuses a
 * new folder with ENOENT although its parent exists (/proc, /sys): it makes the parent again, and
 * tries again, forever at full CPU. A state_dir such as /proc/mpprov hung the agent's start that
 * way, and a reload to it every later reload and the stop. Here each missing folder is made once,
 * from the top down, with `mode`; the first refusal is thrown as it came (ENOENT, ENOTDIR, EACCES).
 * Returns the first folder it made, as Node's does, or undefined when the whole path was there.
 */
export function makeFolderSync(path: string, mode: number): string | undefined {
  let first: string | undefined;
  for (const folder of lineage(path)) {
    try {
      mkdirSync(folder, { mode });
      first ??= folder;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return first;
}

/** makeFolderSync, asynchronous. */
export async function makeFolder(path: string, mode: number): Promise<string | undefined> {
  let first: string | undefined;
  for (const folder of lineage(path)) {
    try {
      await mkdir(folder, { mode });
      first ??= folder;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return first;
}

/** The folder and its parents, the root first. */
function lineage(path: string): string[] {
  const out: string[] = [];
  for (let at = resolve(path); ; at = dirname(at)) {
    out.unshift(at);
    if (dirname(at) === at) return out;
  }
}
