import { createHash } from 'node:crypto';
import { link, opendir, truncate, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { isCaseInsensitiveMount, showPathBytes } from './mount-table.js';
import { joinBytes, readInside } from './read-inside.js';
import { MAX_CONFIG_BYTES, MAX_REFERENCED_BYTES, type StickReader } from './stick-files.js';
import { makeFolder } from '../core/make-folder.js';

/**
 * Reads a stick into a job folder at the start of a job, so pulling the stick afterwards cannot
 * break the job. Only what the job uses is read at all: the configuration file, the signature
 * files (mpprov.sha256, mpprov.sha256.sig) and the files their text mentions. Which files those
 * are is found in the text (a listed path, standing as a value of its own), not by parsing the
 * YAML: the job parses it once, in validation; a path mentioned where no key uses it only costs
 * a copy. Every other file is never opened, so a 100 TiB sparse file or 100 000 empty files left
 * on the stick do not matter. Each file is read through readInside (no link out, no FIFO or
 * device, size cap while reading), and the caps on entries looked at, files taken and total bytes
 * are applied before anything is copied. A referenced file over its limit is kept as a sparse
 * placeholder of the same size, so validation still says "is N bytes; the limit is 1 MiB"; a
 * referenced file refused for what it is (a link out, a FIFO) is kept in `refused`, so validation
 * says exactly that at the key that names it (snapshotReader).
 */

const SNAPSHOT_LIMITS = {
  maxDepth: 4,
  maxFileBytes: MAX_REFERENCED_BYTES,
  maxTotalBytes: 32 * 1024 * 1024,
  /** Folder entries looked at (names only, nothing opened): past this the walk stops. */
  maxEntries: 10_000,
  /** Files taken besides the configuration and signature files. */
  maxFiles: 256,
} as const;

export type SnapshotLimits = { readonly [K in keyof typeof SNAPSHOT_LIMITS]: number };

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

/**
 * The signature files beside the configuration, and the policy file the signature may cover
 * (an unsigned one is reported as ignored, so it is taken even when nothing lists it): read like
 * it, when present.
 */
const SIGNATURE_NAMES = ['mpprov.sha256', 'mpprov.sha256.sig', 'mpprov.policy.yaml'] as const;

/** Folders operating systems leave on sticks; nothing a configuration names lives there. */
const SYSTEM_FOLDERS = new Set([
  'system volume information',
  '$recycle.bin',
  '.trashes',
  '.spotlight-v100',
  '.fseventsd',
  'lost+found',
]);

export interface StickSnapshot {
  /** The copied configuration file, inside `dir`. */
  configFile: string;
  /** The configuration file's name as on the stick, e.g. `mpprov.yaml`. */
  configName: string;
  configSha256: string;
  dir: string;
  files: number;
  bytes: number;
  /** Bytes actually read from the stick: never more than the caps allow. */
  bytesRead: number;
  /** What was left out and why, one sentence each (for the job log). */
  notes: string[];
  /** Mentioned files refused for what they are, by their path on the stick, with the sentence validation gives. */
  refused: ReadonlyMap<string, { message: string; hint?: string }>;
}

class SnapshotError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SnapshotError';
  }
}

/**
 * Copies what `root` (a stick's root or a profiles folder) with `configName` in it holds for a job
 * to `destDir`. Throws SnapshotError when the configuration file itself cannot be taken (a link out
 * of the stick, not a regular file, stick pulled, I/O error): then nothing of it was read.
 */
export async function snapshotStick(
  root: string | Buffer,
  configName: string,
  destDir: string,
  limits: SnapshotLimits = SNAPSHOT_LIMITS,
): Promise<StickSnapshot> {
  await makeFolder(destDir, 0o700);
  const notes: string[] = [];
  const refused = new Map<string, { message: string; hint?: string }>();
  const state = { files: 0, bytes: 0, bytesRead: 0 };
  const configFile = join(destDir, configName);
  const config = await readInside(root, configName, {
    what: configName,
    limit: MAX_CONFIG_BYTES,
    limitText: '256 KiB',
    outside: {
      message: `${configName} is a link that leads outside the stick: it was not read`,
      hint: 'copy the configuration file itself onto the stick',
    },
  });
  let configBytes: Buffer = Buffer.alloc(0);
  if (config.ok) {
    configBytes = config.bytes;
    await writeFile(configFile, configBytes, { mode: 0o600 });
  } else if (config.tooLarge !== undefined) {
    await placeholder(configFile, config.tooLarge, MAX_CONFIG_BYTES);
  } else {
    throw new SnapshotError(config.message);
  }
  state.files += 1;
  state.bytes += configBytes.length;
  state.bytesRead += config.ok ? configBytes.length : (config.bytesRead ?? 0);

  // FAT spellings: decided by the mount's filesystem type (the mount table), never by probing a name.
  const caseInsensitive = await isCaseInsensitiveMount(root);
  const fold = (path: string): string => (caseInsensitive ? path.toLowerCase() : path);
  const texts = [configBytes.toString('utf8')];
  for (const name of SIGNATURE_NAMES) {
    const read = await readInside(root, name, { what: name, limit: MAX_CONFIG_BYTES, limitText: '256 KiB' });
    if (!read.ok) {
      if (!/does not exist$/.test(read.message)) {
        notes.push(`${read.message}: not read`);
        // It was there: the signature check refuses it as unusable, never takes the stick as unsigned.
        refused.set(name, { message: read.message, ...(read.hint === undefined ? {} : { hint: read.hint }) });
      }
      continue;
    }
    state.files += 1;
    state.bytes += read.bytes.length;
    state.bytesRead += read.bytes.length;
    await writeFile(join(destDir, name), read.bytes, { mode: 0o600 });
    if (name === 'mpprov.sha256') texts.push(read.bytes.toString('utf8'));
  }
  const mentioned = mentionsIn(texts, fold);
  const skipAtRoot = new Set([configName, ...SIGNATURE_NAMES, ...AGENT_OUTPUT_NAMES].map((n) => n.toLowerCase()));

  // The walk looks at names only (readdir's entry types): nothing is opened or stat'ed unless mentioned.
  const wanted: string[] = [];
  let entries = 0;
  const walk = async (dir: string | Buffer, rel: string, depth: number): Promise<boolean> => {
    let folder;
    try {
      folder = await opendir(dir);
    } catch (error) {
      notes.push(
        `folder ${rel === '' ? '(root)' : rel} could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
      return true;
    }
    try {
      for await (const entry of folder) {
        entries += 1;
        if (entries > limits.maxEntries) {
          notes.push(`the stick holds more than ${limits.maxEntries} files and folders: the rest was not looked at`);
          return false;
        }
        const name = entry.name;
        const relPath = rel === '' ? name : `${rel}/${name}`;
        if (rel === '' && skipAtRoot.has(name.toLowerCase())) continue;
        if (entry.isDirectory()) {
          if (SYSTEM_FOLDERS.has(name.toLowerCase())) continue;
          if (depth >= limits.maxDepth) {
            if (mentionedUnder(mentioned, fold(relPath)))
              notes.push(`folder ${relPath} is deeper than ${limits.maxDepth} levels: not read`);
            continue;
          }
          if (!(await walk(joinBytes(dir, name), relPath, depth + 1))) return false;
          continue;
        }
        if (mentioned.has(fold(relPath))) wanted.push(relPath);
      }
    } finally {
      await folder.close().catch(() => undefined);
    }
    return true;
  };
  await walk(root, '', 0);

  if (wanted.length > limits.maxFiles) {
    notes.push(
      `the configuration names more than ${limits.maxFiles} files: only the first ${limits.maxFiles} were read`,
    );
    wanted.length = limits.maxFiles;
  }
  const copied: string[] = [];
  let full = false;
  for (const relPath of wanted) {
    const to = join(destDir, relPath);
    // The total is checked on the size fstat gives before anything is read; readInside then
    // refuses a file that grows past its own cap.
    const read = await readInside(root, relPath, {
      what: relPath,
      limit: Math.min(limits.maxFileBytes, Math.max(0, limits.maxTotalBytes - state.bytes)),
      limitText: '1 MiB',
      outside: {
        message: `${relPath} is a link that leads outside the stick`,
        hint: 'copy the file itself onto the stick',
      },
    });
    state.bytesRead += read.ok ? read.bytes.length : (read.bytesRead ?? 0);
    if (!read.ok) {
      if (read.tooLarge !== undefined && read.tooLarge > limits.maxFileBytes) {
        await makeFolder(dirname(to), 0o700);
        await placeholder(to, read.tooLarge, limits.maxFileBytes);
        notes.push(`${relPath} is ${read.tooLarge} bytes, over the 1 MiB limit: not read`);
      } else if (read.tooLarge !== undefined) {
        if (!full)
          notes.push(
            `the files the configuration names hold more than ${limits.maxTotalBytes / (1024 * 1024)} MiB: the rest was not read`,
          );
        full = true;
        refused.set(relPath, {
          message: `file '${relPath}' was not read: the files the configuration names hold more than ${limits.maxTotalBytes / (1024 * 1024)} MiB`,
          hint: 'remove what the Monitoring Point does not need',
        });
      } else {
        notes.push(`${read.message}: not read`);
        refused.set(relPath, {
          message: `file '${relPath}'${read.message.slice(relPath.length)}`,
          ...(read.hint === undefined ? {} : { hint: read.hint }),
        });
      }
      continue;
    }
    await makeFolder(dirname(to), 0o700);
    await writeFile(to, read.bytes, { mode: 0o600 });
    state.files += 1;
    state.bytes += read.bytes.length;
    copied.push(relPath);
  }

  if (caseInsensitive) await addSpellings(configBytes, copied, destDir);
  return {
    configFile,
    configName,
    configSha256: config.ok ? createHash('sha256').update(configBytes).digest('hex') : '',
    dir: destDir,
    files: state.files,
    bytes: state.bytes,
    bytesRead: state.bytesRead,
    notes,
    refused,
  };
}

/**
 * Every path the texts could name, folded for the filesystem: each run of characters between
 * quotes, spaces and YAML punctuation, with a leading `./` dropped, and also each quoted value
 * whole (a path may hold spaces). A superset of the referenced paths is all that is needed.
 */
function mentionsIn(texts: readonly string[], fold: (path: string) => string): Set<string> {
  const out = new Set<string>();
  const add = (raw: string): void => {
    const path = raw.replace(/^(\.\/)+/, '');
    if (path !== '' && path.length < 4096) out.add(fold(path));
  };
  for (const text of texts) {
    for (const token of text.split(/[\s"',{}[\]]+/)) {
      add(token);
      // `key:value` without a space is not YAML, but `ca_cert:x.pem` costs nothing to consider.
      const colon = token.lastIndexOf(':');
      if (colon >= 0) add(token.slice(colon + 1));
    }
    for (const match of text.matchAll(/"([^"\n]*)"|'([^'\n]*)'|:[ \t]+([^#\n]*?)[ \t]*(?:#|$)/gm))
      add(match[1] ?? match[2] ?? match[3] ?? '');
    // sha256sum lines: `<hex>  <path>` (the path may hold spaces).
    for (const match of text.matchAll(/^[0-9a-f]{64} [ *](.+)$/gm)) add(match[1] ?? '');
  }
  return out;
}

function mentionedUnder(mentioned: ReadonlySet<string>, folder: string): boolean {
  for (const path of mentioned) if (path.startsWith(`${folder}/`)) return true;
  return false;
}

/**
 * A reader for validating a snapshot: a file refused while the stick was read is reported as
 * what it was on the stick (a FIFO, a link out), not as missing from the copy.
 */
export function snapshotReader(reader: StickReader, snapshot: StickSnapshot): StickReader {
  return {
    readConfigFile: (file) => reader.readConfigFile(file),
    readReferencedFile: async (baseDir, relPath, session) => {
      const refusal = snapshot.refused.get(relPath.replace(/^(\.\/)+/, ''));
      return refusal === undefined ? reader.readReferencedFile(baseDir, relPath, session) : { ok: false, ...refusal };
    },
  };
}

/**
 * A sparse file of `size` bytes, so the size check in validation says the real size. A filesystem
 * that cannot hold that size (ext4 stops at 16 TiB: EFBIG) gets one byte past the limit instead.
 */
async function placeholder(file: string, size: number, limit: number): Promise<void> {
  await writeFile(file, '', { mode: 0o600 });
  await truncate(file, size).catch(() => truncate(file, limit + 1));
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
      if (
        written === actual ||
        !VALUE_START.test(text[at - 1] ?? '') ||
        !VALUE_END.test(text[at + written.length] ?? '')
      )
        continue;
      spellings.set(written, actual);
    }
  }
  for (const [written, actual] of spellings) {
    const to = join(destDir, written);
    if (relative(destDir, to).startsWith('..')) continue;
    try {
      await makeFolder(dirname(to), 0o700);
      await link(join(destDir, actual), to);
    } catch {
      // already there under this spelling, or a folder of another spelling: validation says so
    }
  }
}

/** What may stand before and after a path written as a YAML value: an edge, space, quote, `./`, flow punctuation. */
const VALUE_START = /^$|[\s"'/:,{[]/;
const VALUE_END = /^$|[\s"',}\]#]/;

/**
 * The stick's label as a person reads it: the mount folder's name (udisks names it after the
 * label); a name that is not UTF-8, given as bytes, with those bytes escaped (`ST\xffICK`).
 */
export function stickLabel(root: string | Buffer): string {
  const shown = typeof root === 'string' ? root : showPathBytes(root);
  return basename(shown) || shown;
}
