import { constants, type Stats } from 'node:fs';
import { lstat, open, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { readUpTo } from '../core/read-capped-file.js';
import { overBudget, type ReadSession } from './read-session.js';

/**
 * The one way a file on a stick is read. A stick comes from outside and the agent runs as root,
 * so a file is only read when it is the stick's own regular file:
 * - its real path (every link on the way resolved) stays inside the folder it is read from, so no
 *   link, of the file or of a folder on its path, leads out (to /etc/shadow, /dev/zero);
 * - what the path is, is looked at with lstat BEFORE opening: a FIFO would block the open, a
 *   device may act on being opened, a socket cannot be read: all are refused unopened;
 * - it is opened with O_NOFOLLOW (a link swapped in after the check is not followed) and
 *   O_NONBLOCK (a FIFO swapped in cannot block), and the opened file must be the very one that
 *   was checked (same device and inode, by fstat) and still a regular file;
 * - it is read with its cap enforced while reading: at most cap+1 bytes are ever read, and a file
 *   whose fstat size is over the cap is not read at all.
 */

export type ReadResult =
  | { ok: true; bytes: Buffer }
  | {
      ok: false;
      message: string;
      hint?: string;
      /** Set when the file was refused for its size alone: how large it is. */
      tooLarge?: number;
      /** Bytes read before refusing (0 unless the file grew past its fstat size). */
      bytesRead?: number;
      /** Set when the file was refused because the job's files would pass its session's bound. */
      overBudget?: true;
    };

export interface ReadInsideOptions {
  /** How the file is named in sentences, e.g. `file 'ca.pem'` or `the configuration file`. */
  what: string;
  limit: number;
  limitText: string;
  /** The hint for a file that is not there, if any. */
  missingHint?: string;
  /** The sentence for a link out of the folder, when the default does not fit. */
  outside?: { message: string; hint: string };
  /** The job's reads so far: a file read before is not read again, and new bytes are bounded. */
  session?: ReadSession;
}

/** What a path that is not a regular file is, in words an engineer knows. */
export function describeNonFile(info: Stats): string {
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isDirectory()) return 'a folder';
  return 'not a regular file';
}

/** `relPath` under `root` as bytes: a root whose name is not UTF-8 (a stick's mount point) stays exact. */
export function joinBytes(root: string | Buffer, relPath: string): Buffer {
  if (typeof root === 'string') return Buffer.from(join(root, relPath));
  return Buffer.concat([root, Buffer.from(`/${relPath}`)]);
}

/** True when `target` (a real path, as bytes) lies strictly inside `root` (a real path, as bytes). */
function isInsideBytes(root: Buffer, target: Buffer): boolean {
  const base = root.length > 0 && root[root.length - 1] === 0x2f ? root : Buffer.concat([root, Buffer.from('/')]);
  return target.length > base.length && target.subarray(0, base.length).equals(base);
}

/**
 * Reads `relPath` under `root` as described above. Never throws for what is on the stick. Paths
 * are handled as bytes throughout (realpath, lstat, open): a root given as bytes, whose name is
 * not UTF-8, is read as exactly that folder.
 */
export async function readInside(
  root: string | Buffer,
  relPath: string,
  options: ReadInsideOptions,
): Promise<ReadResult> {
  const { what } = options;
  let realRoot: Buffer;
  let target: Buffer;
  try {
    realRoot = await realpath(root, { encoding: 'buffer' });
    target = await realpath(joinBytes(root, relPath), { encoding: 'buffer' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      return {
        ok: false,
        message: `${what} does not exist`,
        ...(options.missingHint === undefined ? {} : { hint: options.missingHint }),
      };
    if (code === 'ELOOP')
      return {
        ok: false,
        message: `${what} is a link that leads to itself`,
        hint: 'copy the file itself onto the stick',
      };
    return failed(what, error);
  }
  if (!isInsideBytes(realRoot, target)) {
    return {
      ok: false,
      ...(options.outside ?? {
        message: `${what} is a link that leads outside its folder`,
        hint: 'copy the file itself onto the stick',
      }),
    };
  }
  const known = options.session?.byPath(target);
  if (known !== undefined) return { ok: true, bytes: known };
  let checked: Stats;
  try {
    checked = await lstat(target);
  } catch (error) {
    return failed(what, error);
  }
  if (!checked.isFile()) return notAFile(what, checked);
  if (checked.size > options.limit) return tooLarge(what, checked.size, options);

  let handle;
  try {
    handle = await open(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    // ELOOP here: the file was replaced by a link between the check and the open.
    if ((error as NodeJS.ErrnoException).code === 'ELOOP')
      return {
        ok: false,
        ...(options.outside ?? {
          message: `${what} is a link that leads outside its folder`,
          hint: 'copy the file itself onto the stick',
        }),
      };
    return failed(what, error);
  }
  try {
    const info = await handle.stat();
    if (info.dev !== checked.dev || info.ino !== checked.ino) {
      return {
        ok: false,
        message: `${what} changed while it was being read`,
        hint: 'leave the stick alone while mpprov reads it, then insert it again',
      };
    }
    if (!info.isFile()) return notAFile(what, info);
    if (info.size > options.limit) return tooLarge(what, info.size, options);
    const session = options.session;
    const same = session?.byIdentity(info.dev, info.ino, target);
    if (same !== undefined) return { ok: true, bytes: same };
    if (session !== undefined && !session.fits(info.size)) return { ok: false, ...overBudget(what), overBudget: true };
    // One byte past the cap: a file that grows between fstat and read is still caught, and
    // never read further than that.
    const bytes = await readUpTo(handle, info.size, options.limit);
    if (bytes.length > options.limit)
      return {
        ok: false,
        message: `${what} is larger than ${options.limitText}`,
        hint: 'remove what the Monitoring Point does not need',
        bytesRead: bytes.length,
      };
    // A file that grew after fstat is judged by what was read.
    if (session !== undefined && !session.fits(bytes.length))
      return { ok: false, ...overBudget(what), overBudget: true, bytesRead: bytes.length };
    session?.remember(target, info.dev, info.ino, bytes);
    return { ok: true, bytes };
  } catch (error) {
    return failed(what, error);
  } finally {
    await handle.close();
  }
}

function notAFile(what: string, info: Stats): ReadResult {
  return {
    ok: false,
    message: `${what} is ${describeNonFile(info)}, not a regular file`,
    hint: 'copy the file itself onto the stick',
  };
}

function tooLarge(what: string, size: number, options: ReadInsideOptions): ReadResult {
  return {
    ok: false,
    message: `${what} is ${size} bytes; the limit is ${options.limitText}`,
    hint: 'remove what the Monitoring Point does not need',
    tooLarge: size,
  };
}

function failed(what: string, error: unknown): ReadResult {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM')
    return { ok: false, message: `${what} cannot be read (permission denied)` };
  return { ok: false, message: `${what} cannot be read (${code ?? 'error'})` };
}
