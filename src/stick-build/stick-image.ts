import { execFile } from 'node:child_process';
import { chmod, readdir, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MIB = 1024 * 1024;
/** Every file's time in the image: a second build gives the same image bytes. */
const FIXED_TIME = new Date('2000-01-01T00:00:00Z');

/** The volume label: the site upper-cased, cut to 11 characters (FAT's limit). */
export function imageLabel(site: string): string {
  return site.toUpperCase().slice(0, 11);
}

/**
 * Writes `image`, a FAT image of the folder `dir` ready for dd or a USB writer: mkfs.vfat, then
 * mtools' mcopy (no root, no mount). Sized to the files plus 4 MiB for usb.log and the result
 * files, at least 8 MiB. Volume id, times and file order are fixed, so the same folder gives the
 * same image. Readable by its owner only: it holds the stick's secrets.
 */
export async function writeStickImage(dir: string, image: string, site: string): Promise<void> {
  const entries = await walk(dir);
  let bytes = 0;
  for (const entry of entries) {
    const info = await stat(join(dir, entry));
    bytes += info.size;
    await utimes(join(dir, entry), FIXED_TIME, FIXED_TIME);
  }
  const size = Math.max(8 * MIB, Math.ceil((bytes + 4 * MIB) / MIB) * MIB);
  await rm(image, { force: true });
  const volumeId = [...site]
    .reduce((hash, c) => (Math.imul(hash, 31) + c.charCodeAt(0)) >>> 0, 7)
    .toString(16)
    .padStart(8, '0');
  await run('mkfs.vfat', ['--invariant', '-i', volumeId, '-n', imageLabel(site), '-C', image, String(size / 1024)]);
  // The image holds the stick's secret files, which have no mode on FAT: the image keeps theirs,
  // set while it is still empty.
  await chmod(image, 0o600);
  for (const folder of [...new Set(entries.flatMap((entry) => parentsOf(entry)))])
    await utimes(join(dir, folder), FIXED_TIME, FIXED_TIME);
  const top = [...new Set(entries.map((entry) => entry.split('/')[0] as string))].sort();
  // One mcopy for the whole tree (-s), keeping the fixed times (-m).
  await run('mcopy', ['-s', '-m', '-i', image, ...top.map((name) => join(dir, name)), '::/'], {
    env: { ...process.env, MTOOLS_SKIP_CHECK: '1' },
  });
}

/** Every file under `dir`, by its path with '/', in a fixed order. */
async function walk(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  const names = (await readdir(join(dir, rel), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of names) {
    const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory()) out.push(...(await walk(dir, path)));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

function parentsOf(path: string): string[] {
  const parts = path.split('/').slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}
