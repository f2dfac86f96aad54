import { constants } from 'node:fs/promises';
import { openRegularFile } from './regular-file.js';

/**
 * Follows a JSON-lines file another process appends to (and rotates by renaming it away): calls
 * `onLine` with each complete line written after the start (older lines say nothing about what
 * the follower waits for now). Polled, not watched: inotify misses a rotation, and a read every
 * half second costs nothing. The timer is unref'd; the returned function stops it.
 */

export const FOLLOW_EVERY_MS = 500;

/** A line longer than this is not one of ours: dropped, the next ones still read. */
const MAX_LINE_CHARS = 256 * 1024;

export function followLines(
  file: string,
  onLine: (line: string) => void,
  everyMs: number = FOLLOW_EVERY_MS,
): () => void {
  let offset: number | undefined;
  let inode: number | undefined;
  let partial = '';
  let busy = false;
  const read = async (): Promise<void> => {
    // Never through a symlink, never blocking on a FIFO planted in the file's place.
    const handle = await openRegularFile(file, constants.O_RDONLY).catch(() => undefined);
    if (handle === undefined) {
      offset ??= 0;
      return;
    }
    try {
      const { size, ino } = await handle.stat();
      // A new file (rotated or replaced) grown past the old offset before this look is still new.
      const replaced = inode !== undefined && ino !== inode;
      inode = ino;
      if (offset === undefined || size < offset || replaced) {
        // First look: start at the end. A rotated or replaced file: read the new one whole.
        offset = offset === undefined ? size : 0;
        partial = '';
      }
      if (size === offset) return;
      const buffer = Buffer.alloc(Math.min(size - offset, 4 * 1024 * 1024));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      offset += bytesRead;
      const lines = (partial + buffer.subarray(0, bytesRead).toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      if (partial.length > MAX_LINE_CHARS) partial = '';
      for (const line of lines) if (line !== '' && line.length <= MAX_LINE_CHARS) onLine(line);
    } finally {
      await handle.close();
    }
  };
  const tick = (): void => {
    if (busy) return;
    busy = true;
    void read()
      .catch(() => undefined)
      .finally(() => (busy = false));
  };
  tick();
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
