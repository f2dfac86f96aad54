import { open, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';

/**
 * Reading a stick's files safely: the configuration file and the files it names. A stick comes
 * from outside, so a referenced path must stay inside the configuration's folder (no absolute
 * paths, no `..`, no symlink leading out) and every read is size-capped before it happens.
 */

export const CONFIG_FILE_NAMES = ['mpprov.yaml', 'mpprov.yml'] as const;
export const MAX_CONFIG_BYTES = 256 * 1024;
export const MAX_REFERENCED_BYTES = 1024 * 1024;

export type ReadResult = { ok: true; bytes: Buffer } | { ok: false; message: string; hint?: string };

/**
 * How validation reads a stick: the configuration file and the files it names. A seam so a job
 * can be shown to read each file once (a test counts the calls); the real one is fileStickReader.
 */
export interface StickReader {
  readConfigFile(file: string): Promise<ReadResult>;
  readReferencedFile(baseDir: string, relPath: string): Promise<ReadResult>;
}

/** The configuration file in a folder (a stick's root or a profiles folder), if there is one. */
export async function findConfigFile(dir: string): Promise<string | undefined> {
  for (const name of CONFIG_FILE_NAMES) {
    const candidate = join(dir, name);
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

export async function readConfigFile(file: string): Promise<ReadResult> {
  return readCapped(file, MAX_CONFIG_BYTES, 'the configuration file', '256 KiB');
}

/** Reads a file named by the configuration, relative to `baseDir`, refusing any path that leaves it. */
export async function readReferencedFile(baseDir: string, relPath: string): Promise<ReadResult> {
  if (isAbsolute(relPath) || /^[A-Za-z]:[\\/]/.test(relPath)) {
    return { ok: false, message: `'${relPath}' is an absolute path`, hint: 'give a path relative to the configuration file\'s folder' };
  }
  if (relPath.split(/[\\/]/).includes('..')) {
    return { ok: false, message: `'${relPath}' leaves the configuration's folder through '..'`, hint: 'keep the file inside the configuration file\'s folder' };
  }
  let base: string;
  let target: string;
  try {
    base = await realpath(baseDir);
    target = await realpath(join(baseDir, relPath));
  } catch {
    return { ok: false, message: `file '${relPath}' does not exist`, hint: 'check the name and that the file is on the stick' };
  }
  const inside = relative(base, target);
  if (inside === '' || inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside)) {
    return { ok: false, message: `'${relPath}' is a link that leads outside the configuration's folder`, hint: 'copy the file itself onto the stick' };
  }
  return readCapped(target, MAX_REFERENCED_BYTES, `file '${relPath}'`, '1 MiB');
}

export const fileStickReader: StickReader = { readConfigFile, readReferencedFile };

async function readCapped(file: string, limit: number, what: string, limitText: string): Promise<ReadResult> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, message: `${what} does not exist` };
    if (code === 'EACCES' || code === 'EPERM') return { ok: false, message: `${what} cannot be read (permission denied)` };
    return { ok: false, message: `${what} cannot be read (${code ?? 'error'})` };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { ok: false, message: `${what} is not a regular file` };
    if (info.size > limit) {
      return { ok: false, message: `${what} is ${info.size} bytes; the limit is ${limitText}`, hint: 'remove what the Monitoring Point does not need' };
    }
    // Read one byte past the limit: a file that grows between stat and read is still caught.
    const buffer = Buffer.alloc(limit + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > limit) return { ok: false, message: `${what} is larger than ${limitText}` };
    }
    return { ok: true, bytes: buffer.subarray(0, length) };
  } catch (error) {
    return { ok: false, message: `${what} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  } finally {
    await handle.close();
  }
}
