import { readFile } from 'node:fs/promises';
import { resolve, sep } from 'node:path';

/**
 * The system's mount table as the kernel shows it to this process (/proc/self/mountinfo), and
 * which of its mounts sit under a media root. Pure parsing plus one read: the watcher decides when.
 */

export interface MountEntry {
  /**
   * Where it is mounted, e.g. /media/tech/MPSTICK. A mount point whose name is not UTF-8 is shown
   * here with its bytes escaped (`/media/tech/ST\xffICK`): text for logs and keys, not a path.
   */
  target: string;
  /** Only for a mount point whose name is not UTF-8: its bytes, the path fs calls take (mountPath). */
  targetBytes?: Buffer;
  /** What is mounted, e.g. /dev/sdb1 or fusefat. */
  source: string;
  fstype: string;
  /** Kernel device number of the mounted filesystem, `MAJ:MIN`: changes when a stick is mounted again. */
  device: string;
  readOnly: boolean;
}

const MOUNTINFO_FILE = '/proc/self/mountinfo';

/** mountinfo escapes space, tab, newline and backslash as octal (`\040`); every other byte is as it is. */
function unescapeOctal(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/**
 * A path's bytes as text: itself when it is UTF-8; otherwise every byte outside printable ASCII,
 * and the backslash, as `\xHH`, so a name the kernel holds as bytes (a label in Latin-1, a 0xFF)
 * is shown visibly and distinctly instead of as U+FFFD, which would name no folder at all.
 */
export function showPathBytes(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  if (Buffer.from(text, 'utf8').equals(bytes)) return text;
  let out = '';
  for (const byte of bytes)
    out +=
      byte >= 0x20 && byte < 0x7f && byte !== 0x5c
        ? String.fromCharCode(byte)
        : `\\x${byte.toString(16).padStart(2, '0')}`;
  return out;
}

/** What fs calls take for a mount point: its name as text, or its bytes when that is not UTF-8. */
export function mountPath(entry: Pick<MountEntry, 'target' | 'targetBytes'>): string | Buffer {
  return entry.targetBytes ?? entry.target;
}

/**
 * Parses /proc/self/mountinfo (proc(5)); lines it cannot read are skipped rather than fatal. Read
 * as bytes: a mount point's name is bytes to the kernel, and decoding it as UTF-8 lost any byte
 * that is not (the stick at that folder was then "not there").
 */
export function parseMountinfo(table: string | Buffer): MountEntry[] {
  // latin1: one character per byte, so fields split and unescape without touching a byte.
  const text = typeof table === 'string' ? Buffer.from(table, 'utf8').toString('latin1') : table.toString('latin1');
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const fields = line.split(' ');
    const dash = fields.indexOf('-', 6);
    if (dash < 0 || fields.length < dash + 3) continue;
    const options = fields[5] ?? '';
    const targetBytes = Buffer.from(unescapeOctal(fields[4] ?? ''), 'latin1');
    const target = showPathBytes(targetBytes);
    const utf8 = target === targetBytes.toString('utf8');
    entries.push({
      target,
      ...(utf8 ? {} : { targetBytes }),
      source: Buffer.from(unescapeOctal(fields[dash + 2] ?? ''), 'latin1').toString('utf8'),
      fstype: Buffer.from(fields[dash + 1] ?? '', 'latin1').toString('utf8'),
      device: fields[2] ?? '',
      readOnly: options.split(',').includes('ro'),
    });
  }
  return entries;
}

export async function readMountTable(file = MOUNTINFO_FILE): Promise<MountEntry[]> {
  return parseMountinfo(await readFile(file));
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
const CASE_INSENSITIVE_FSTYPES: ReadonlySet<string> = new Set([
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
export function mountOf(path: string | Buffer, entries: readonly MountEntry[]): MountEntry | undefined {
  // Compared as bytes: a path, or a mount point, whose name is not UTF-8 is matched exactly.
  const wanted = typeof path === 'string' ? Buffer.from(path) : path;
  let best: MountEntry | undefined;
  let bestLength = -1;
  for (const entry of entries) {
    const target = entry.targetBytes ?? Buffer.from(entry.target);
    const inside =
      target.equals(wanted) ||
      entry.target === '/' ||
      (wanted.length > target.length &&
        wanted[target.length] === 0x2f &&
        wanted.subarray(0, target.length).equals(target));
    if (inside && target.length >= bestLength) {
      best = entry;
      bestLength = target.length;
    }
  }
  return best;
}

/**
 * True when `path` (absolute, links resolved) lies on a case-insensitive filesystem, decided by
 * its type in the mount table rather than by probing names: a probe depends on which spelling
 * the stick happens to list (a stick written on Windows lists MPPROV.YAML) and guessed wrong.
 */
export async function isCaseInsensitiveMount(path: string | Buffer, mountinfoFile = MOUNTINFO_FILE): Promise<boolean> {
  const entry = mountOf(
    typeof path === 'string' ? resolve(path) : path,
    await readMountTable(mountinfoFile).catch(() => []),
  );
  return entry !== undefined && CASE_INSENSITIVE_FSTYPES.has(entry.fstype);
}
