import { readFile } from 'node:fs/promises';
import { resolve, sep } from 'node:path';

/**
 * The system's mount table as the kernel shows it to this process (/proc/self/mountinfo), and
 * which of its mounts sit under a media root. Pure parsing plus one read: the watcher decides when.
 */

export interface MountEntry {
  /** Where it is mounted, e.g. /media/tech/MPSTICK. */
  target: string;
  /** What is mounted, e.g. /dev/sdb1 or fusefat. */
  source: string;
  fstype: string;
  /** Kernel device number of the mounted filesystem, `MAJ:MIN`: changes when a stick is mounted again. */
  device: string;
  readOnly: boolean;
}

export const MOUNTINFO_FILE = '/proc/self/mountinfo';

/** mountinfo escapes space, tab, newline and backslash as octal: `\040`. */
function unescapeOctal(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** Parses /proc/self/mountinfo (proc(5)); lines it cannot read are skipped rather than fatal. */
export function parseMountinfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const fields = line.split(' ');
    const dash = fields.indexOf('-', 6);
    if (dash < 0 || fields.length < dash + 3) continue;
    const options = fields[5] ?? '';
    entries.push({
      target: unescapeOctal(fields[4] ?? ''),
      source: unescapeOctal(fields[dash + 2] ?? ''),
      fstype: fields[dash + 1] ?? '',
      device: fields[2] ?? '',
      readOnly: options.split(',').includes('ro'),
    });
  }
  return entries;
}

export async function readMountTable(file = MOUNTINFO_FILE): Promise<MountEntry[]> {
  return parseMountinfo(await readFile(file, 'utf8'));
}

/** True when `target` is a media root or lies below one (`/media/tech/STICK` under `/media`). */
export function isUnderMediaRoot(target: string, mediaRoots: readonly string[]): boolean {
  return mediaRoots.some((root) => {
    const base = resolve(root);
    return target === base || target.startsWith(base.endsWith(sep) ? base : `${base}${sep}`);
  });
}

/**
 * The mounts under the media roots, keyed by target. When several mounts stack on one target the
 * last (topmost) wins, as it is the one a path lookup reaches.
 */
export function mediaMounts(entries: readonly MountEntry[], mediaRoots: readonly string[]): Map<string, MountEntry> {
  const out = new Map<string, MountEntry>();
  for (const entry of entries) if (isUnderMediaRoot(entry.target, mediaRoots)) out.set(entry.target, entry);
  return out;
}

/**
 * Filesystems that find a name whatever its case (FAT in all its forms, exFAT), by the type the
 * mount table gives: vfat/msdos/exfat in the kernel, fuse.fusefat and the exFAT FUSE drivers.
 * (fuseblk is left out: ntfs-3g, which also mounts as fuseblk, is case-sensitive.)
 */
export const CASE_INSENSITIVE_FSTYPES: ReadonlySet<string> = new Set([
  'vfat',
  'msdos',
  'fat',
  'umsdos',
  'exfat',
  'fuse.fusefat',
  'fuse.exfat',
  'fuse.exfat-fuse',
]);

/** The mount `path` lies on: the entry with the longest target that contains it (the last one when stacked). */
export function mountOf(path: string, entries: readonly MountEntry[]): MountEntry | undefined {
  let best: MountEntry | undefined;
  for (const entry of entries) {
    const inside = path === entry.target || entry.target === '/' || path.startsWith(`${entry.target}${sep}`);
    if (inside && (best === undefined || entry.target.length >= best.target.length)) best = entry;
  }
  return best;
}

/**
 * True when `path` (absolute, links resolved) lies on a case-insensitive filesystem, decided by
 * its type in the mount table rather than by probing names: a probe depends on which spelling
 * the stick happens to list (a stick written on Windows lists MPPROV.YAML) and guessed wrong.
 */
export async function isCaseInsensitiveMount(path: string, mountinfoFile = MOUNTINFO_FILE): Promise<boolean> {
  const entry = mountOf(resolve(path), await readMountTable(mountinfoFile).catch(() => []));
  return entry !== undefined && CASE_INSENSITIVE_FSTYPES.has(entry.fstype);
}
