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
    const buffer = Buffer.alloc(cap + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > cap) return { ok: false, why: 'too-large' };
    }
    return { ok: true, bytes: buffer.subarray(0, length) };
  } catch (error) {
    return { ok: false, why: 'error', code: (error as NodeJS.ErrnoException).code ?? 'error' };
  } finally {
    await handle.close().catch(() => undefined);
  }
}
