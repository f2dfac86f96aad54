import { createHash } from 'node:crypto';
import { link, mkdir, readdir, readFile, realpath, stat, truncate, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { isCaseInsensitiveMount } from './mount-table.js';
import { MAX_CONFIG_BYTES, MAX_REFERENCED_BYTES } from './stick-files.js';

/**
 * Reads a whole stick into a job folder at the start of a job, so pulling the stick afterwards
 * cannot break the job. The rule is deliberately simple rather than config-driven: every regular
 * file under the root up to depth 4, each at most 1 MiB (the configuration file 256 KiB), at most
 * 32 MiB in all, no link leading out, and not the agent's own usb.log / mpprov-result.json.
 * A file over its limit is kept as a sparse placeholder of the same size, so validation still
 * says "is N bytes; the limit is 1 MiB" rather than "does not exist".
 */

export const SNAPSHOT_LIMITS = { maxDepth: 4, maxFileBytes: MAX_REFERENCED_BYTES, maxTotalBytes: 32 * 1024 * 1024 } as const;

/** Files the agent writes on a stick: never part of its input. */
export const AGENT_OUTPUT_NAMES = [
  'usb.log',
  'mpprov-result.json',
  // The one-glance result files (report/result-file.ts), in lower case as compared here.
  'mpprov-busy.txt',
  'mpprov-ok.txt',
  'mpprov-no-change.txt',
  'mpprov-failed.txt',
] as const;

/** Folders operating systems leave on sticks; nothing a configuration names lives there. */
const SYSTEM_FOLDERS = new Set(['system volume information', '$recycle.bin', '.trashes', '.spotlight-v100', '.fseventsd', 'lost+found']);

export interface StickSnapshot {
  /** The copied configuration file, inside `dir`. */
  configFile: string;
  /** The configuration file's name as on the stick, e.g. `mpprov.yaml`. */
  configName: string;
  configSha256: string;
  dir: string;
  files: number;
  bytes: number;
  /** What was left out and why, one sentence each (for the job log). */
  notes: string[];
}

export class SnapshotError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SnapshotError';
  }
}

/**
 * Copies `root` (a stick's root or a profiles folder) with `configName` in it to `destDir`.
 * Throws SnapshotError when the configuration file itself cannot be read (stick pulled, I/O error).
 */
export async function snapshotStick(root: string, configName: string, destDir: string): Promise<StickSnapshot> {
  await mkdir(destDir, { recursive: true, mode: 0o700 });
  const notes: string[] = [];
  let realRoot: string;
  let configBytes: Buffer;
  try {
    realRoot = await realpath(root);
    configBytes = await readFile(join(root, configName));
  } catch (error) {
    throw new SnapshotError(`cannot read ${configName} on ${root} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { cause: error });
  }
  const configFile = join(destDir, configName);
  const state = { files: 0, bytes: 0, full: false };
  if (configBytes.length > MAX_CONFIG_BYTES) await placeholder(configFile, configBytes.length);
  else await writeFile(configFile, configBytes, { mode: 0o600 });
  state.files += 1;
  state.bytes += Math.min(configBytes.length, MAX_CONFIG_BYTES);

  const caseInsensitive = await isCaseInsensitiveMount(realRoot);
  const sameName = (a: string, b: string): boolean => (caseInsensitive ? a.toLowerCase() === b.toLowerCase() : a === b);
  const copied: string[] = [];

  const walk = async (dir: string, rel: string, depth: number): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      notes.push(`folder ${rel === '' ? '(root)' : rel} could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
      return;
    }
    for (const entry of entries) {
      const name = entry.name;
      const relPath = rel === '' ? name : `${rel}/${name}`;
      const source = join(dir, name);
      if (rel === '' && (sameName(name, configName) || AGENT_OUTPUT_NAMES.some((n) => n === name.toLowerCase()))) continue;
      if (entry.isDirectory()) {
        if (SYSTEM_FOLDERS.has(name.toLowerCase())) continue;
        if (depth >= SNAPSHOT_LIMITS.maxDepth) {
          notes.push(`folder ${relPath} is deeper than ${SNAPSHOT_LIMITS.maxDepth} levels: not read`);
          continue;
        }
        await mkdir(join(destDir, relPath), { recursive: true, mode: 0o700 });
        await walk(source, relPath, depth + 1);
        continue;
      }
      let from = source;
      if (entry.isSymbolicLink()) {
        const target = await realpath(source).catch(() => undefined);
        const inside = target === undefined ? undefined : relative(realRoot, target);
        if (inside === undefined || inside === '' || inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside)) {
          notes.push(`${relPath} is a link that leads outside the stick: not read`);
          continue;
        }
        from = target as string;
      }
      const info = await stat(from).catch(() => undefined);
      if (info === undefined || !info.isFile()) continue; // links to folders, sockets, vanished files
      await copyOne(from, relPath, info.size);
    }
  };

  const copyOne = async (from: string, relPath: string, size: number): Promise<void> => {
    const to = join(destDir, relPath);
    if (size > SNAPSHOT_LIMITS.maxFileBytes) {
      await placeholder(to, size);
      notes.push(`${relPath} is ${size} bytes, over the 1 MiB limit: not read`);
      return;
    }
    if (state.bytes + size > SNAPSHOT_LIMITS.maxTotalBytes) {
      if (!state.full) notes.push('the stick holds more than 32 MiB of files: the rest was not read');
      state.full = true;
      return;
    }
    let bytes: Buffer;
    try {
      bytes = await readFile(from);
    } catch (error) {
      notes.push(`${relPath} could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
      return;
    }
    await writeFile(to, bytes, { mode: 0o600 });
    state.files += 1;
    state.bytes += bytes.length;
    copied.push(relPath);
  };

  await walk(root, '', 0);
  if (caseInsensitive) await addSpellings(configBytes, copied, destDir);
  return {
    configFile,
    configName,
    configSha256: createHash('sha256').update(configBytes).digest('hex'),
    dir: destDir,
    files: state.files,
    bytes: state.bytes,
    notes,
  };
}

async function placeholder(file: string, size: number): Promise<void> {
  await writeFile(file, '', { mode: 0o600 });
  await truncate(file, size);
}

/**
 * FAT (vfat, fusefat, exFAT) ignores case, and may list `admin.pw` as `ADMIN.PW`. The copy sits on
 * a case-sensitive disk, so every path the configuration spells differently from the listing gets
 * a hard link under the configuration's spelling: the file it names is found, as on the stick.
 * The spellings are found in the configuration's text (each copied path, wherever the text holds
 * it in another case, standing as a value of its own), not by parsing the YAML: the job parses it
 * once, in validation. A spelling found where no key uses it only adds a harmless link.
 */
async function addSpellings(configBytes: Buffer, copied: readonly string[], destDir: string): Promise<void> {
  const text = configBytes.toString('utf8');
  const spellings = new Map<string, string>();
  for (const actual of copied) {
    for (const match of text.matchAll(new RegExp(actual.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi'))) {
      const at = match.index ?? 0;
      const written = match[0];
      if (written === actual || !VALUE_START.test(text[at - 1] ?? '') || !VALUE_END.test(text[at + written.length] ?? '')) continue;
      spellings.set(written, actual);
    }
  }
  for (const [written, actual] of spellings) {
    const to = join(destDir, written);
    if (relative(destDir, to).startsWith('..')) continue;
    try {
      await mkdir(dirname(to), { recursive: true, mode: 0o700 });
      await link(join(destDir, actual), to);
    } catch {
      // already there under this spelling, or a folder of another spelling: validation says so
    }
  }
}

/** What may stand before and after a path written as a YAML value: an edge, space, quote, `./`, flow punctuation. */
const VALUE_START = /^$|[\s"'/:,{[]/;
const VALUE_END = /^$|[\s"',}\]#]/;

/** The stick's label as a person reads it: the mount folder's name (udisks names it after the label). */
export function stickLabel(root: string): string {
  return basename(root) || root;
}
