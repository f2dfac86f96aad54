import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

/**
 * Writing to a stick that may be FAT through an odd driver, read-only, full, or pulled at any
 * moment, and that may be hostile: the agent's usb.log and result files and the signer's
 * mpprov.sha256 and its signature all go through here, so every one of them gets the same
 * refusals. No handle is kept open between writes (the stick can be unmounted at any time), every
 * write is synced and closed before it counts, and a file is never opened with O_TRUNC ('w'): on
 * fusefat that leaves the old size and a broken cluster chain. fusefat's quirks that shaped this
 * file are listed in docs/fat-sticks.md.
 */

/** How an append reached the disk: a new file written from its start, or an existing one extended in place. */
export type AppendMethod = 'created' | 'extended';

/** A usb.log.tmp larger than this is not copied back as usb.log (it is left where it is). */
const MAX_RESTORE_BYTES = 8 * 1024 * 1024;

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
  let result: T;
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
    result = await use(handle);
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
  // A write counts only once its close succeeded: fusefat writes the file's cluster chain (its
  // FAT) when the file is closed, not at fsync, and a close it could not finish leaves the written
  // bytes past the chain, lost (test/report/fat-kill-every-write.test.ts).
  if (flags === 'r') await handle.close().catch(() => undefined);
  else await handle.close();
  return result;
}

/**
 * Appends `text` to `file` (created if missing) in place: one write, fsync, and a close that must
 * succeed (withHandle). The file is never replaced by a rename: on fusefat a rename over usb.log is three separate directory writes
 * (the old entry deleted, the temporary one cleared, the new one written), and a power loss between
 * the last two left no usb.log and no usb.log.tmp at all (test/report/fat-kill-every-write.test.ts).
 * An existing file is written from its last byte on, rewriting that byte as it is: fusefat refuses a
 * write that starts exactly at the end of a file inside its first cluster (EPERM) and pads one that
 * starts at a cluster boundary with a cluster of NULs (test/report/fat-append-boundary.test.ts),
 * while a write that starts inside the file extends it correctly; any other filesystem takes either.
 * Throws what the stick said (EROFS, ENOSPC, ENOENT/EIO after a pull, ...), or EIO when the file
 * did not grow by exactly `text`.
 */
export async function appendDurably(file: string, text: string, target: WriteTarget = {}): Promise<AppendMethod> {
  const bytes = Buffer.from(text, 'utf8');
  const exists = (await inspect(file)) !== undefined;
  const { size, end } = exists ? await readEnd(file, 1) : { size: 0, end: Buffer.alloc(0) };
  return withHandle(
    file,
    exists ? 'r+' : 'a',
    async (handle) => {
      if ((await handle.stat()).size !== size) throw changedMeanwhile(file);
      await writeAll(handle, Buffer.concat([end, bytes]), size - end.length);
      await handle.sync();
      const after = (await handle.stat()).size;
      if (after !== size + bytes.length) {
        throw Object.assign(new Error(`${file} grew to ${after} bytes, not ${size + bytes.length}`), { code: 'EIO' });
      }
      return size === 0 ? 'created' : 'extended';
    },
    target,
  );
}

/**
 * The size of `file` and its last `count` bytes (fewer when it is shorter), read through a handle
 * of their own, closed before any write: fusefat links no new cluster onto a file extended through
 * a handle that has read up to its end, and the bytes past the old chain are lost ("File size is
 * 4123 bytes, cluster chain length is 4096 bytes", says fsck.fat).
 */
async function readEnd(file: string, count: number): Promise<{ size: number; end: Buffer }> {
  return withHandle(
    file,
    'r',
    async (handle) => {
      const { size } = await handle.stat();
      const end = Buffer.alloc(Math.min(count, size));
      const { bytesRead } = await handle.read(end, 0, end.length, size - end.length);
      if (bytesRead !== end.length) throw changedMeanwhile(file);
      return { size, end };
    },
    {},
  );
}

const changedMeanwhile = (file: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`${file} changed while mpprov wrote to it`), { code: 'EIO' });

/**
 * Replaces `file` with `content`: a temporary file beside it (never truncating one in place), fsync,
 * rename over, then a best-effort fsync of the folder. Atomic on a journalled filesystem; on FAT a
 * power loss inside the rename can leave neither name (see appendDurably), so usb.log, whose
 * earlier lines must survive, never goes through here.
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
 * Puts back a log that only its temporary copy holds: earlier mpprov versions replaced usb.log
 * with replaceDurably, and power lost inside that rename on FAT could leave `<file>.tmp` and no
 * `<file>`. Before a job's first write, such a `.tmp` (one plain file on the stick's own
 * filesystem: no link, FIFO or second name) is copied into a new `<file>`, synced, and only then
 * removed. It is copied, not renamed back: a rename is the very step that loses both names. Cut
 * during the copy, the stick keeps `<file>.tmp` whole beside a short `<file>`, and since a `<file>`
 * that exists is left alone, nothing ever removes that `.tmp`. Returns whether it put one back.
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
  if (info.size > MAX_RESTORE_BYTES) return false;
  const content = await withHandle(tmp, 'r', (handle) => handle.readFile(), {});
  await withHandle(
    file,
    'wx',
    async (handle) => {
      await writeAll(handle, content, 0);
      await handle.sync();
    },
    target,
  );
  if (!(await withHandle(file, 'r', (handle) => handle.readFile(), {})).equals(content)) return false;
  await unlink(tmp);
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

/**
 * Appends `text` to a file that ends in `tail` (a line we wrote last, to stay last only until more
 * text comes), in place and never by a rename: the file is cut to where `tail` begins (ftruncate,
 * fsync, close), then `text` is appended (appendDurably, through a new handle: fusefat keeps
 * the size an open handle had before ftruncate, and a write through the same handle brought the
 * old size and stale bytes back). Power lost in between leaves the log without its tail, never
 * without a line written before. A file that holds nothing but `tail` is removed and written anew
 * (fusefat hung writing to a file cut to 0 bytes); one that does not end in `tail` (someone else
 * appended) just gets `text` appended.
 */
export async function appendOverTail(
  file: string,
  tail: string,
  text: string,
  target: WriteTarget = {},
): Promise<AppendMethod> {
  if (tail === '') return appendDurably(file, text, target);
  const tailBytes = Buffer.from(tail, 'utf8');
  // lstat first: a link is refused, never read through.
  if ((await inspect(file)) === undefined) return appendDurably(file, text, target);
  const { size, end } = await readEnd(file, tailBytes.length);
  if (!end.equals(tailBytes)) return appendDurably(file, text, target);
  const keep = size - tailBytes.length;
  if (keep === 0) await unlink(file);
  else {
    // A handle of its own, that neither reads nor writes: fusefat brought the old size and stale
    // bytes back when a handle that had been cut wrote on.
    await withHandle(
      file,
      'r+',
      async (handle) => {
        if ((await handle.stat()).size !== size) throw changedMeanwhile(file);
        await handle.truncate(keep);
        await handle.sync();
      },
      target,
    );
  }
  return appendDurably(file, text, target);
}
