import { mkdtemp, rmdir, symlink, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A text path for a folder whose name is not UTF-8 (a stick mounted at `/media/tech/ST\xffICK`).
 * Node passes a path given as text to the system as UTF-8, so such a folder can only be named by
 * its bytes; but the usb.log writer, the result files and the unmount tools take text (the tools'
 * arguments are UTF-8 text too). A symbolic link to the bytes, in a private folder of its own,
 * is a text path that every one of them follows to exactly where the bytes lead.
 *
 * A link, not an open descriptor's /proc/<pid>/fd/<N>: a descriptor held for the job keeps the
 * mount busy, so the technician's eject (and the agent's own unmount: umount says "target is
 * busy") fails while it is open, and it keeps naming the mount it was opened on after a pull, so
 * the writer's device check could no longer see the stick go or come back. A link is looked up
 * again at every use, as the folder's own name is: the stick behaves as one at a UTF-8 folder.
 */
export interface FolderAlias {
  /** The link: a text path naming the folder. */
  readonly path: string;
  /** Removes the link and its folder; never throws. */
  remove(): Promise<void>;
}

/** Makes a link to `bytes` in a new folder of its own (mkdtemp: 0700, a name nobody else holds). */
export async function aliasFolder(bytes: Buffer): Promise<FolderAlias> {
  const dir = await mkdtemp(join(tmpdir(), 'mpprov-folder-'));
  const path = join(dir, 'root');
  try {
    await symlink(bytes, path);
  } catch (error) {
    await rmdir(dir).catch(() => undefined);
    throw error;
  }
  return {
    path,
    async remove() {
      // unlink removes the link itself, never what it leads to.
      await unlink(path).catch(() => undefined);
      await rmdir(dir).catch(() => undefined);
    },
  };
}
