import { mkdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p` without Node's `recursive: true`, which never returns where the file system refuses a
 * new folder with ENOENT although its parent exists (/proc, /sys): it makes the parent again, and
 * tries again, forever at full CPU. A state_dir such as /proc/mpprov hung the agent's start that
 * way, and a reload to it every later reload and the stop. Here each missing folder is made once,
 * from the top down, with `mode`; the first refusal is thrown as it came (ENOENT, ENOTDIR, EACCES).
 */
export function makeFolderSync(path: string, mode: number): void {
  for (const folder of lineage(path)) {
    try {
      mkdirSync(folder, { mode });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/** makeFolderSync, asynchronous. */
export async function makeFolder(path: string, mode: number): Promise<void> {
  for (const folder of lineage(path)) {
    try {
      await mkdir(folder, { mode });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
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
