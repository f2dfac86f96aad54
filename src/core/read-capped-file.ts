import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';

/**
 * Reads a small file that someone else may have planted: a regular file only (a FIFO named in its
 * place is opened O_NONBLOCK and refused, never waited on), and at most `cap` bytes whatever its
 * size says (it may grow while read). One reader for the key, the status and the signers files.
 */
export type CappedRead =
  | { ok: true; bytes: Buffer }
  /** `code` is the errno code (ENOENT, EACCES, ...) when the open or a read failed. */
  | { ok: false; why: 'not-regular' | 'too-large' | 'error'; code?: string };

export async function readCappedFile(path: string, cap: number): Promise<CappedRead> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { ok: false, why: 'error', code: (error as NodeJS.ErrnoException).code ?? 'error' };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { ok: false, why: 'not-regular' };
    if (info.size > cap) return { ok: false, why: 'too-large' };
    const bytes = await readUpTo(handle, info.size, cap);
    return bytes.length > cap ? { ok: false, why: 'too-large' } : { ok: true, bytes };
  } catch (error) {
    return { ok: false, why: 'error', code: (error as NodeJS.ErrnoException).code ?? 'error' };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Reads an open file from its start: at most `cap + 1` bytes (so a caller sees a file that grew
 * past its cap while read), into a buffer sized for `expectedSize` (the fstat size) and grown
 * only if the file grows. A buffer of the cap's size for every file would cost a zero-filled
 * 1 MiB per certificate on a stick, held until the file's bytes are dropped, and memory the
 * allocator keeps after them: the agent's RSS climbed by tens of MiB over its first jobs.
 */
export async function readUpTo(handle: FileHandle, expectedSize: number, cap: number): Promise<Buffer> {
  let buffer = Buffer.alloc(Math.min(expectedSize, cap) + 1);
  let length = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
    if (bytesRead === 0) break;
    length += bytesRead;
    if (length > cap) break;
    if (length === buffer.length) {
      // The file is larger than it said: room for more, never past one byte over the cap.
      const grown = Buffer.alloc(Math.min(buffer.length * 2, cap + 1));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
  }
  return buffer.subarray(0, length);
}
