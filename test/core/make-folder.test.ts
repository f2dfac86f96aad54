import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeFolder, makeFolderSync } from '../../src/core/make-folder.js';

describe('makeFolder', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('makes the missing folders with the mode, and leaves an existing one as it is', async () => {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-make-folder-'));
    await makeFolder(join(dir, 'a', 'b', 'c'), 0o700);
    makeFolderSync(join(dir, 'a', 'x', 'y'), 0o700);
    for (const made of ['a', 'a/b', 'a/b/c', 'a/x', 'a/x/y']) {
      const info = await stat(join(dir, made));
      expect(info.isDirectory()).toBe(true);
      expect(info.mode & 0o777).toBe(0o700);
    }
    await makeFolder(join(dir, 'a', 'b'), 0o755);
    expect((await stat(join(dir, 'a', 'b'))).mode & 0o777).toBe(0o700);
  });

  it("says the first folder it made, as Node's recursive mkdir does, or undefined when all were there", async () => {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-make-folder-'));
    expect(await makeFolder(join(dir, 'a', 'b', 'c'), 0o700)).toBe(join(dir, 'a'));
    expect(await makeFolder(join(dir, 'a', 'b', 'c'), 0o700)).toBeUndefined();
    expect(await makeFolder(join(dir, 'a', 'b', 'd'), 0o700)).toBe(join(dir, 'a', 'b', 'd'));
    expect(makeFolderSync(join(dir, 'x', 'y'), 0o700)).toBe(join(dir, 'x'));
    expect(makeFolderSync(join(dir, 'x', 'y'), 0o700)).toBeUndefined();
    expect(makeFolderSync(join(dir, 'x', 'z'), 0o700)).toBe(join(dir, 'x', 'z'));
  });

  it('throws the file system refusal: under a file, and under /proc (where recursive mkdir never returns)', async () => {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-make-folder-'));
    await writeFile(join(dir, 'file'), 'x');
    await expect(makeFolder(join(dir, 'file', 'sub'), 0o700)).rejects.toMatchObject({ code: 'ENOTDIR' });
    expect(() => makeFolderSync(join(dir ?? '', 'file', 'sub'), 0o700)).toThrow(
      expect.objectContaining({ code: 'ENOTDIR' }),
    );
    await expect(makeFolder('/proc/mpprov-no-such-folder/state', 0o700)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(() => makeFolderSync('/proc/mpprov-no-such-folder', 0o700)).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
  });
});
