import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Puts `bytes` at `file` whole or not at all: a new temporary file beside it (O_EXCL, never
 * O_TRUNC: on fusefat a truncating open leaves the old size and a broken cluster chain), synced,
 * then renamed over the old one. A FAT driver that refuses to rename over an existing file gets
 * the old one unlinked first.
 */
export async function replaceFile(file: string, bytes: Buffer): Promise<void> {
  const temp = join(dirname(file), `.${basename(file)}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o644);
  try {
    try {
      let offset = 0;
      while (offset < bytes.length) {
        const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset, offset);
        if (bytesWritten <= 0) throw Object.assign(new Error(`the write to ${temp} made no progress`), { code: 'EIO' });
        offset += bytesWritten;
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temp, file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' && code !== 'EPERM' && code !== 'EACCES' && code !== 'ENOTSUP') throw error;
      await unlink(file).catch(() => undefined);
      await rename(temp, file);
    }
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
