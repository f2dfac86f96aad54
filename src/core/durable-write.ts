import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

/**
 * Writing to a stick that may be FAT through an odd driver, read-only, full, or pulled at any
 * moment, and that may be hostile: the agent's usb.log and result files and the signer's
 * mpprov.sha256 and its signature all go through here, so every one of them gets the same
 * refusals. No handle is kept open between writes (the stick can be unmounted at any time), every
 * write is synced before it counts, and a file is never opened with O_TRUNC ('w'): on fusefat
 * that leaves the old size and a broken cluster chain.
 */

/** How an append reached the disk: plain append, r+ at the end offset, or a rewrite and rename. */
export type AppendMethod = 'append' | 'write-at-end' | 'rewrite';

/** A file larger than this is not rewritten whole just to add a few lines. */
const MAX_REWRITE_BYTES = 8 * 1024 * 1024;

async function writeAll(handle: FileHandle, bytes: Buffer, position: number | null): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(
      bytes,
      offset,
      bytes.length - offset,
      position === null ? null : position + offset,
    );
    if (bytesWritten <= 0) throw Object.assign(new Error('the write made no progress'), { code: 'EIO' });
    offset += bytesWritten;
  }
}

/**
 * Where the file must be: the device number of the stick's filesystem. A stick pulled between
 * our check and our open leaves the empty mount folder on the laptop's own disk, and an open
 * there would create usb.log on the laptop. After every open the handle's device is compared;
 * a file created in the wrong place is removed again and the write fails as ENODEV (removed).
 */
export interface WriteTarget {
  device?: number;
}

/**
 * Open flags by name, with O_NOFOLLOW: a stick may plant usb.log (or a result file) as a symbolic
 * link to another file on the same stick (its mpprov.yaml, say), and the device check alone would
 * let an append follow it. O_NOFOLLOW fails such an open with ELOOP before a byte is written.
 * fusefat has no links (FAT cannot hold one) and accepts the flag, so FAT sticks are unaffected.
 */
const OPEN_FLAGS = {
  // O_NONBLOCK everywhere: a stick's usb.log can be a FIFO, whose open would wait forever for a
  // reader (holding one of libuv's four threads and the stick's mount); with it the open fails at
  // once (ENXIO), and regular files are unaffected.
  a: constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  'r+': constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  wx: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  r: constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW,
} as const;
type OpenMode = keyof typeof OPEN_FLAGS;

/** A file on the stick that is a symbolic link: refused, never followed (code ELOOP, like O_NOFOLLOW's). */
function linkRefused(file: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${file} is a symbolic link; mpprov does not follow links on a stick`), {
    code: 'ELOOP',
    path: file,
  });
}

/**
 * A file on the stick that is not one plain file: a FIFO, a device, a socket, a folder, or a hard
 * link (a second name of another file on the stick, its mpprov.yaml say: the log would be written
 * into it). Refused with code ENOTPLAIN, never written or read.
 */
function notPlainRefused(file: string): NodeJS.ErrnoException {
  return Object.assign(
    new Error(
      `${file} is not a plain file (a FIFO, a device, a folder or a second name of another file); mpprov does not write to it`,
    ),
    { code: 'ENOTPLAIN', path: file },
  );
}

/**
 * A file on the stick that lives on another filesystem than its folder: something is mounted on
 * it (a bind mount of a file elsewhere). A replace would fail on the mount point and an append
 * would write into the other filesystem's file, so it is refused like any file that is not one
 * plain file of the stick's own (code ENOTPLAIN).
 */
function otherFilesystemRefused(file: string): NodeJS.ErrnoException {
  return Object.assign(
    new Error(
      `${file} is on another filesystem than its folder (something is mounted on it); mpprov does not write to it`,
    ),
    { code: 'ENOTPLAIN', path: file },
  );
}

/** Whether a file is one plain file of its own (a file created a moment ago is). */
function plain(info: { isFile(): boolean; nlink: number }): boolean {
  return info.isFile() && info.nlink === 1;
}

/**
 * What is at `file` now, without following a link: undefined when nothing is (it will be
 * created); throws for a link, anything but one plain file, or a file on another filesystem than
 * its folder.
 */
async function inspect(file: string): Promise<Stats | undefined> {
  const info = await lstat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (info === undefined) return undefined;
  if (info.isSymbolicLink()) throw linkRefused(file);
  if (!plain(info)) throw notPlainRefused(file);
  // Compared with the folder, not with the stick's device: a folder that is no longer the stick
  // (pulled) is the device check's to say, as a removal.
  if (info.dev !== (await stat(dirname(file))).dev) throw otherFilesystemRefused(file);
  return info;
}

/**
 * Throws the refusal a replace of `file` would meet, before anything is written: `file` or its
 * temporary `<file>.tmp` is a link, not one plain file, or on another filesystem than its folder.
 * A plain `<file>.tmp` is a write cut short earlier and is fine (the replace removes it). For a
 * caller that writes several files and must not write the first when a later one is refused.
 */
export async function checkReplaceable(file: string): Promise<void> {
  await inspect(file);
  await inspect(`${file}.tmp`);
}

/**
 * Opens `file`; a creating open ('a', 'wx') with a target device goes through the folder first.
 * Opened by path, a stick pulled between our check and the open gets its file created in the empty
 * mount folder on the laptop's own disk, removed again only after the check below: for that
 * moment the folder is not empty, and a stick mounted there again meanwhile fails ("mountpoint is
 * not empty", a loaded CI run). So the folder is opened and its device checked first, and the file
 * is created through that open folder (/proc/self/fd/N/name): nothing is created anywhere but on
 * the stick, which the open folder also keeps from being unmounted under the write.
 */
async function openOnTarget(file: string, flags: OpenMode, target: WriteTarget, mode: number): Promise<FileHandle> {
  const creates = flags === 'a' || flags === 'wx';
  if (!creates || target.device === undefined) return open(file, OPEN_FLAGS[flags], mode);
  const folder = await open(dirname(file), constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    if ((await folder.stat()).dev !== target.device)
      throw Object.assign(new Error(`${dirname(file)} is no longer the stick`), { code: 'ENODEV' });
    return await open(`/proc/self/fd/${folder.fd}/${basename(file)}`, OPEN_FLAGS[flags], mode);
  } finally {
    await folder.close().catch(() => undefined);
  }
}

async function withHandle<T>(
  file: string,
  flags: OpenMode,
  use: (handle: FileHandle) => Promise<T>,
  target: WriteTarget,
  mode = 0o644,
  kind: 'file' | 'folder' = 'file',
): Promise<T> {
  let handle: FileHandle;
  try {
    handle = await openOnTarget(file, flags, target, mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw linkRefused(file);
    throw error;
  }
  try {
    const opened = await handle.stat();
    // Only a folder sync opens a folder; every file must be one plain file.
    if (kind === 'folder' ? !opened.isDirectory() : !plain(opened)) throw notPlainRefused(file);
    if (target.device !== undefined && opened.dev !== target.device) {
      const there = await stat(file).catch(() => undefined);
      if (there?.ino === opened.ino && there.dev === opened.dev && opened.size === 0)
        await unlink(file).catch(() => undefined);
      throw Object.assign(new Error(`${file} is no longer on the stick`), { code: 'ENODEV' });
    }
    // The agent runs with UMask=0077, but on a stick with Unix permissions (ext4) the technician
    // must be able to read usb.log: a file we create gets its mode set explicitly. FAT ignores it.
    if ((flags === 'a' || flags === 'wx') && opened.size === 0) await handle.chmod(mode).catch(() => undefined);
    return await use(handle);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

const refused = (error: unknown): boolean => {
  const code = (error as NodeJS.ErrnoException).code;
  // fusefat refuses appends to a file under one cluster with EPERM; some drivers say EINVAL or ENOTSUP.
  return code === 'EPERM' || code === 'EINVAL' || code === 'ENOTSUP' || code === 'EOPNOTSUPP';
};

/**
 * Appends `text` to `file` (created if missing): open with 'a', write, fdatasync, close. When the
 * driver refuses (fusefat: EPERM on small files), writes at the end offset with 'r+', and failing
 * that writes a temporary file with the old content plus `text`, fsyncs it and renames it over.
 * Throws the last error (EROFS, ENOSPC, ENOENT/EIO after a pull, ...) when nothing worked.
 */
export async function appendDurably(file: string, text: string, target: WriteTarget = {}): Promise<AppendMethod> {
  const bytes = Buffer.from(text, 'utf8');
  // fusefat gives a file that ends exactly on a cluster boundary a whole extra cluster of NULs when
  // it is extended in place (test/report/fat-append-boundary.test.ts): such a file is rewritten.
  const size = await sizeOf(file);
  if (size > 0 && size % BOUNDARY_BYTES === 0 && size <= MAX_REWRITE_BYTES)
    return rewriteWith(file, size, bytes, target);
  for (const flags of ['a', 'r+'] as const) {
    try {
      await withHandle(
        file,
        flags,
        async (handle) => {
          const before = (await handle.stat()).size;
          await writeAll(handle, bytes, flags === 'a' ? null : before);
          await handle.datasync();
          // Any driver that put the bytes elsewhere than at the end is caught here, not in usb.log.
          const after = (await handle.stat()).size;
          if (after !== before + bytes.length) throw new MisplacedWrite(before);
        },
        target,
      );
      return flags === 'a' ? 'append' : 'write-at-end';
    } catch (error) {
      if (error instanceof MisplacedWrite) return rewriteWith(file, error.goodBytes, bytes, target);
      if (!refused(error)) throw error;
    }
  }
  return rewriteWith(file, undefined, bytes, target);
}

/** Cluster sizes are multiples of 512: a file ending on a multiple of it may end on a cluster. */
const BOUNDARY_BYTES = 512;

/** An in-place write that did not land where it was sent; the first `goodBytes` are still right. */
class MisplacedWrite extends Error {
  constructor(readonly goodBytes: number) {
    super('the write did not land at the end of the file');
  }
}

async function sizeOf(file: string): Promise<number> {
  return (await inspect(file))?.size ?? 0;
}

/**
 * Writes a temporary file with the old content (its first `keep` bytes, when only those are
 * known good) plus `bytes`, fsyncs it and renames it over `file`.
 */
async function rewriteWith(
  file: string,
  keep: number | undefined,
  bytes: Buffer,
  target: WriteTarget,
): Promise<AppendMethod> {
  await inspect(file);
  let old: Buffer;
  try {
    old = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    old = Buffer.alloc(0);
  }
  if (keep !== undefined) old = old.subarray(0, Math.min(keep, old.length));
  if (old.length > MAX_REWRITE_BYTES)
    throw Object.assign(new Error(`${file} refuses appends and is too large to rewrite`), { code: 'EFBIG' });
  await replaceDurably(file, Buffer.concat([old, bytes]), target);
  return 'rewrite';
}

/**
 * Replaces `file` with `content` atomically: a temporary file beside it (never truncating one in
 * place), fsync, rename over, then a best-effort fsync of the folder.
 */
export async function replaceDurably(
  file: string,
  content: string | Buffer,
  target: WriteTarget = {},
  mode = 0o644,
): Promise<void> {
  // The rename would replace a planted link rather than follow it, but a link where our file
  // belongs is a hostile stick: refused and said, like usb.log. The same for the temporary file:
  // a plain one is a replace cut short and is removed, but a link, a FIFO, a folder or a second
  // name there was planted, and is refused rather than quietly unlinked.
  await checkReplaceable(file);
  const tmp = `${file}.tmp`;
  await unlink(tmp).catch(() => undefined);
  try {
    await withHandle(
      tmp,
      'wx',
      async (handle) => {
        await writeAll(handle, Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8'), null);
        await handle.sync();
      },
      target,
      mode,
    );
    await rename(tmp, file);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    throw error;
  }
  await withHandle(dirname(file), 'r', (handle) => handle.sync(), {}, 0o644, 'folder').catch(() => undefined);
}

/**
 * Puts back a log that only its temporary copy holds. replaceDurably renames `<file>.tmp` over
 * `<file>`; power lost inside that rename on FAT (fusefat, no journal) can leave the directory
 * with `<file>.tmp` and no `<file>` (test/report/fat-power-loss.test.ts). Before a job's first
 * write, such a `.tmp` (one plain file on the stick's own filesystem: no link, FIFO or second name) is renamed
 * back, so the earlier jobs' lines stay in usb.log instead of being replaced by a new file and
 * later deleted as a stale temporary. Returns whether it did; a `<file>` that exists is left alone.
 */
export async function restoreInterruptedReplace(file: string, target: WriteTarget = {}): Promise<boolean> {
  const missing = await lstat(file).then(
    () => false,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return true;
      throw error;
    },
  );
  if (!missing) return false;
  const tmp = `${file}.tmp`;
  const info = await lstat(tmp).catch(() => undefined);
  if (info === undefined || !plain(info) || (target.device !== undefined && info.dev !== target.device)) return false;
  await rename(tmp, file);
  await withHandle(dirname(file), 'r', (handle) => handle.sync(), {}, 0o644, 'folder').catch(() => undefined);
  return true;
}

/**
 * Whether `file` is non-empty and its last byte is not a newline: a log cut mid-line (power lost
 * during an append, or someone's editor) so the next text must start on a line of its own.
 * A missing file is not; a link is refused like every other write.
 */
export async function endsMidLine(file: string): Promise<boolean> {
  try {
    return await withHandle(
      file,
      'r',
      async (handle) => {
        const { size } = await handle.stat();
        if (size === 0) return false;
        const last = Buffer.alloc(1);
        await handle.read(last, 0, 1, size - 1);
        return last[0] !== 0x0a;
      },
      {},
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** usb.log above this size keeps its still-running line in the middle rather than be rewritten per batch. */
const MAX_TAIL_REWRITE_BYTES = 1024 * 1024;

/**
 * Appends `text` to a file that ends in `tail` (a line we wrote last, to stay last only until more
 * text comes): the file is rewritten without the tail, as a temporary file renamed over it.
 * Overwriting the tail in place with 'r+' was tried and fusefat left NUL bytes and stale tails
 * behind (test/report/usb-log-trailer.test.ts), so the proven rename path is used; a file that
 * does not end in `tail` (someone else appended) or is over 1 MiB just gets `text` appended.
 */
export async function appendOverTail(
  file: string,
  tail: string,
  text: string,
  target: WriteTarget = {},
): Promise<AppendMethod> {
  if (tail === '') return appendDurably(file, text, target);
  const tailBytes = Buffer.from(tail, 'utf8');
  let old: Buffer;
  try {
    // lstat first: a link is refused, never read through.
    const info = await inspect(file);
    if (info === undefined || info.size > MAX_TAIL_REWRITE_BYTES) return appendDurably(file, text, target);
    old = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return appendDurably(file, text, target);
    throw error;
  }
  if (old.length < tailBytes.length || !old.subarray(old.length - tailBytes.length).equals(tailBytes))
    return appendDurably(file, text, target);
  await replaceDurably(
    file,
    Buffer.concat([old.subarray(0, old.length - tailBytes.length), Buffer.from(text, 'utf8')]),
    target,
  );
  return 'rewrite';
}
