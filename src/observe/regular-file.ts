import { constants, type FileHandle, open } from 'node:fs/promises';
import { ErrorCode, MpprovError } from '../core/errors.js';

/**
 * The state folder's files are opened only as what they should be: a regular file, never through a
 * symlink (O_NOFOLLOW: a link planted there must not make a root process write or read elsewhere)
 * and never blocking (O_NONBLOCK: opening a FIFO put in a file's place would otherwise hang a
 * thread of the pool until a peer shows up, and with four of them the whole process).
 */

export async function openRegularFile(file: string, flags: number, mode = 0o600): Promise<FileHandle> {
  const handle = await open(file, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK, mode);
  const stats = await handle.stat().catch(async (error: unknown) => {
    await handle.close();
    throw error;
  });
  if (!stats.isFile()) {
    await handle.close();
    throw new MpprovError(ErrorCode.StateFileRefused, `${file} is not a regular file: left alone`);
  }
  return handle;
}

/** At most the last `maxBytes` of a regular file ('' when absent or not a regular file). */
export async function readRegularTail(file: string, maxBytes: number): Promise<string> {
  const handle = await openRegularFile(file, constants.O_RDONLY).catch(() => undefined);
  if (handle === undefined) return '';
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, size - length);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}
