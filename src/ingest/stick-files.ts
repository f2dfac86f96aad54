import { stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { joinBytes, readInside, type ReadResult } from './read-inside.js';
import type { ReadSession } from './read-session.js';

/**
 * Reading a stick's files safely: the configuration file and the files it names. A stick comes
 * from outside, so a referenced path must stay inside the configuration's folder (no absolute
 * paths, no `..`, no symlink leading out) and every read is size-capped before it happens.
 */

const CONFIG_FILE_NAMES = ['mpprov.yaml', 'mpprov.yml'] as const;
export const MAX_CONFIG_BYTES = 256 * 1024;
export const MAX_REFERENCED_BYTES = 1024 * 1024;

export type { ReadResult };

/**
 * How validation reads a stick: the configuration file and the files it names. A seam so a job
 * can be shown to read each file once (a test counts the calls); the real one is fileStickReader.
 */
export interface StickReader {
  readConfigFile(file: string): Promise<ReadResult>;
  /** With the job's `session`, a file read before is not read again, and the bytes held are bounded. */
  readReferencedFile(baseDir: string, relPath: string, session?: ReadSession): Promise<ReadResult>;
}

/**
 * The configuration file in a folder (a stick's root or a profiles folder), if there is one. A
 * folder given as bytes (a mount point whose name is not UTF-8) gives the file as bytes.
 */
export async function findConfigFile(dir: string): Promise<string | undefined>;
export async function findConfigFile(dir: Buffer): Promise<Buffer | undefined>;
export async function findConfigFile(dir: string | Buffer): Promise<string | Buffer | undefined>;
export async function findConfigFile(dir: string | Buffer): Promise<string | Buffer | undefined> {
  for (const name of CONFIG_FILE_NAMES) {
    const candidate = typeof dir === 'string' ? join(dir, name) : joinBytes(dir, name);
    try {
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // not there: try the next name
    }
  }
  return undefined;
}

/** A folder given where a configuration file is expected means the stick's root: its mpprov.yaml. */
export async function configFileOf(target: string): Promise<string> {
  try {
    if ((await stat(target)).isDirectory()) return (await findConfigFile(target)) ?? join(target, CONFIG_FILE_NAMES[0]);
  } catch {
    // not there: loading it reports that the file does not exist
  }
  return target;
}

/** Reads the configuration file: only the folder's own regular file, at most 256 KiB, never a link out of its folder. */
export async function readConfigFile(file: string): Promise<ReadResult> {
  return readInside(dirname(file), basename(file), {
    what: 'the configuration file',
    limit: MAX_CONFIG_BYTES,
    limitText: '256 KiB',
    outside: {
      message: 'the configuration file is a link that leads outside its folder: it was not read',
      hint: 'copy the configuration file itself onto the stick',
    },
  });
}

/** Reads a file named by the configuration, relative to `baseDir`, refusing any path that leaves it. */
export async function readReferencedFile(baseDir: string, relPath: string, session?: ReadSession): Promise<ReadResult> {
  if (isAbsolute(relPath) || /^[A-Za-z]:[\\/]/.test(relPath)) {
    return {
      ok: false,
      message: `'${relPath}' is an absolute path`,
      hint: "give a path relative to the configuration file's folder",
    };
  }
  if (relPath.split(/[\\/]/).includes('..')) {
    return {
      ok: false,
      message: `'${relPath}' leaves the configuration's folder through '..'`,
      hint: "keep the file inside the configuration file's folder",
    };
  }
  return readInside(baseDir, relPath, {
    what: `file '${relPath}'`,
    limit: MAX_REFERENCED_BYTES,
    limitText: '1 MiB',
    missingHint: 'check the name and that the file is on the stick',
    outside: {
      message: `'${relPath}' is a link that leads outside the configuration's folder`,
      hint: 'copy the file itself onto the stick',
    },
    ...(session === undefined ? {} : { session }),
  });
}

export const fileStickReader: StickReader = { readConfigFile, readReferencedFile };
