import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * ssh-keygen reads files, so the bytes mpprov already read go into a folder only this user can
 * open (never the stick: it may be pulled or changed between our read and ssh-keygen's), and the
 * folder is removed whatever happens.
 */
export async function withPrivateTempDir<T>(
  use: (dir: string, put: (name: string, bytes: Buffer) => Promise<string>) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'mpprov-signature-'));
  try {
    await chmod(dir, 0o700);
    const put = async (name: string, bytes: Buffer): Promise<string> => {
      const file = join(dir, name);
      await writeFile(file, bytes, { mode: 0o600, flag: 'wx' });
      return file;
    };
    return await use(dir, put);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
