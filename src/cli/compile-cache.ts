import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  type BigIntStats,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getHeapCodeStatistics, getHeapSpaceStatistics } from 'node:v8';
import { Script } from 'node:vm';
import { makeFolderSync } from '../core/make-folder.js';
import { withCodeCacheChecksum } from '../core/v8-flags.js';
import { LONG_RUNNING_COMMANDS } from './long-running.js';

/**
 * Runs the bundled CLI (one CommonJS file) with V8's code cache. Compiling the 4 MB bundle is a
 * third of a short command's time (bench: `validate` 260 -> 170 ms, CPU profile: 60-80 ms in the
 * compiler); V8 accepts the bytecode it produced on an earlier run instead. Node 22 has this
 * built in (module.enableCompileCache); Node 20, Debian 13's, does not, hence this file.
 *
 * The cache is code the process runs, so it is only ever read from a folder and a file that
 * belong to the user running mpprov and that nobody else can write (root: /var/cache/mpprov, or
 * systemd's CACHE_DIRECTORY; others: ~/.cache/mpprov). Anything else, or any error, and the
 * bundle is compiled as without a cache: the cache can make mpprov faster, never stop it.
 */

/** What the cache did, for MPPROV_COMPILE_CACHE_DEBUG=1 (tests and the bench read it on stderr). */
export type CacheOutcome = 'off' | 'unusable' | 'miss' | 'hit' | 'rejected';

export interface CompileCacheOptions {
  /** The bundle (CommonJS, pure ASCII: packaging/bundle.mjs). */
  appFile: string;
  /** The command line after `mpprov`: its first word picks the cache (each command runs other code). */
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  uid: number;
}

/** A cache file above this is not read (a bundle's is about 1 MiB). */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * A cache file is this header, then V8's data. The header holds how much bytecode the process
 * that wrote the cache had (v8.getHeapCodeStatistics), and how much of its heap and of its code
 * space was in use: a cache holds only what its run compiled, and one written by a short run
 * (`apply --help`, a stick refused at once) would leave every later full run compiling the rest
 * itself, run after run. A run that ends with clearly more bytecode than its cache's writer had
 * writes the cache again, once.
 */
const HEADER = Buffer.from('mpprovC2');
const HEADER_BYTES = HEADER.length + 12;
/** More bytecode than the cache's writer had by this factor: the cache is written again. */
const GROWTH_TO_REWRITE = 1.1;
/**
 * Counting bytecode walks the whole heap (1.7 ms at the end of an `apply`, every run), so it is
 * done only when the heap in use or the code space (baseline code of what ran often) has grown
 * past the writer's, numbers V8 keeps and gives in microseconds. A run that went further than the
 * writer holds more of both (heap MiB and code space MiB at the exit: `apply --help` 11.7 and
 * 0.23, a refused stick 13.1 and 0.47, a whole apply 14.6 and 0.93), a run like the writer's
 * neither (within 2 %), and a writer with a large heap but little code (a stick of many problems)
 * is still replaced by a run that ran more code.
 */
const HEAP_GROWTH_TO_COUNT = 1.05;
const CODE_SPACE_GROWTH_TO_COUNT = 1.25;
/**
 * A writer whose heap at its exit was past this held outsized data (a refused stick near its 256
 * KiB: 60 MiB of heap and 0.7 MiB of code space, for less bytecode than a whole validation): no
 * ordinary run passes those figures, so its cache, partial as it may be, would never be counted
 * against. The next hit run under this writes the cache again, once, whatever its bytecode.
 * Ordinary runs end at 11-17 MiB on Node 20 to 24.
 */
const OUTSIZED_HEAP_KIB = 32 * 1024;

interface CacheFile {
  /** V8's cached data. */
  data: Buffer;
  /** What the process that wrote it had at its exit. */
  writer: HeapFigures & { bytecodeBytes: number };
}

/** KiB of V8's heap in use, all spaces and the code space alone. */
interface HeapFigures {
  heapKiB: number;
  codeKiB: number;
}

function heapFiguresNow(): HeapFigures {
  let heap = 0;
  let code = 0;
  for (const space of getHeapSpaceStatistics()) {
    heap += space.space_used_size;
    if (space.space_name === 'code_space') code += space.space_used_size;
  }
  return { heapKiB: Math.round(heap / 1024), codeKiB: Math.round(code / 1024) };
}

/** Whether `now` went clearly further than the writer: only then is the bytecode counted. */
function grewPastWriter(now: HeapFigures, writer: HeapFigures): boolean {
  return (
    now.heapKiB > writer.heapKiB * HEAP_GROWTH_TO_COUNT || now.codeKiB > writer.codeKiB * CODE_SPACE_GROWTH_TO_COUNT
  );
}

function bytecodeBytesNow(): number {
  return getHeapCodeStatistics().bytecode_and_metadata_size;
}

/** The short commands, each with a cache of its own (main.ts's table; test/cli/compile-cache.test.ts compares). */
export const CACHED_COMMANDS: readonly string[] = [
  'validate',
  'plan',
  'apply',
  'schema',
  'status',
  'sign',
  'secrets-record',
  'service',
  'stick',
  'preflight',
  'describe-cli',
  'help',
];

/** The cache folder, or undefined when there is none (MPPROV_COMPILE_CACHE=off, no home). */
export function cacheFolder(env: NodeJS.ProcessEnv, uid: number): string | undefined {
  const chosen = env.MPPROV_COMPILE_CACHE;
  if (chosen === 'off') return undefined;
  if (chosen !== undefined && chosen.startsWith('/')) return chosen;
  // systemd's CacheDirectory= (the unit's own, made by systemd for the unit's user).
  const systemd = env.CACHE_DIRECTORY?.split(':')[0];
  if (systemd !== undefined && systemd.startsWith('/')) return systemd;
  if (uid === 0) return '/var/cache/mpprov';
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && xdg.startsWith('/')) return join(xdg, 'mpprov');
  const home = env.HOME;
  return home !== undefined && home.startsWith('/') ? join(home, '.cache', 'mpprov') : undefined;
}

/** The command's cache key: its first word when it is a short command, `version` for -V/--version, else `other`. */
export function commandKey(args: readonly string[]): string | undefined {
  const first = args[0];
  if (first === '-V' || first === '--version') return 'version';
  // The long-running commands get no cache: their start-up does not matter, and bytecode read for
  // every function the first run touched would stay resident in the agent for its whole life.
  if (first !== undefined && LONG_RUNNING_COMMANDS.has(first)) return undefined;
  return first !== undefined && CACHED_COMMANDS.includes(first) ? first : 'other';
}

/**
 * The cache's file name: the command, node's version and architecture, and the bundle file as it
 * is now (device, inode, size, modification and change times in nanoseconds). V8 checks only the
 * source's length: a bundle replaced by another of the same size (`cp -p`, a reproducible build,
 * an edit in place with its time put back) would otherwise run the old one's bytecode. Each of
 * those changes the inode or the change time, which no one but the kernel sets (where the file
 * system keeps one: bundleIdentity). Not a hash of the content: that read all 1.7 MB through
 * SHA-256 at every start (1.5 ms of an `apply`). `@` cannot be in a key, so no command's name is
 * the start of another's.
 */
function cacheName(key: string, bundle: BigIntStats, bytes: Buffer): string {
  return `${key}@${bundleIdentity(bundle, bytes)}.v8cache`;
}

const NS_PER_SECOND = 1_000_000_000n;

/**
 * Node and the bundle file, as a cache's name holds them after the command. A file whose times
 * are both whole seconds is on a file system that keeps no change time of its own (FAT gives the
 * modification time, to 2 s, and numbers inodes by place) or keeps times to the second: there an
 * edit in place with its time put back looks the same, so the content is hashed as before (on
 * ext4 and tmpfs the change time has nanoseconds, whole seconds one file in a billion).
 */
export function bundleIdentity(bundle: BigIntStats, bytes: Buffer): string {
  const timesVouch = bundle.mtimeNs % NS_PER_SECOND !== 0n || bundle.ctimeNs % NS_PER_SECOND !== 0n;
  const file = timesVouch
    ? [bundle.dev, bundle.ino, bundle.size, bundle.mtimeNs, bundle.ctimeNs].map((n) => n.toString(16)).join('-')
    : `sha256-${sha256Hex(bytes).slice(0, 32)}`;
  return `${process.version}-${process.arch}-${file}`;
}

/** node:crypto taken here only: nothing else at a command's start needs it. */
function sha256Hex(bytes: Buffer): string {
  return process.getBuiltinModule('node:crypto').createHash('sha256').update(bytes).digest('hex');
}

/** Whether a file or folder is ours alone: owned by `uid` and writable by nobody else. */
function ownedAlone(info: { uid: number; mode: number }, uid: number): boolean {
  return info.uid === uid && (info.mode & 0o022) === 0;
}

/**
 * The folder, made (0700) if missing, opened once: a descriptor, or undefined unless it is a real
 * folder (O_NOFOLLOW) that only `uid` can write. Every read and write then goes through that open
 * folder (/proc/self/fd/N/name), never through the path again: a folder swapped for a link after
 * the check (by someone who can write its parent) gets nothing read from it or written to it.
 */
function openFolder(folder: string, uid: number): number | undefined {
  let fd: number;
  try {
    // Not Node's recursive mkdir: under /proc or /sys (MPPROV_COMPILE_CACHE, XDG_CACHE_HOME, HOME
    // set there) it never returns, and every command hung before its first line.
    makeFolderSync(folder, 0o700);
    fd = openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    if (ownedAlone(fstatSync(fd), uid)) return fd;
  } catch {
    // not usable
  }
  closeSync(fd);
  return undefined;
}

const inFolder = (folder: number, name: string): string => `/proc/self/fd/${folder}/${name}`;

/** The cache file, or undefined: missing, a link, not a plain file, someone else's, writable by others, too large, or without our header. */
function readCache(folder: number, name: string, uid: number): CacheFile | undefined {
  let fd: number;
  try {
    fd = openSync(inFolder(folder, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || !ownedAlone(info, uid) || info.size <= HEADER_BYTES || info.size > MAX_CACHE_BYTES)
      return undefined;
    const bytes = readFileSync(fd);
    if (!bytes.subarray(0, HEADER.length).equals(HEADER)) return undefined;
    return {
      data: bytes.subarray(HEADER_BYTES),
      writer: {
        bytecodeBytes: bytes.readUInt32LE(HEADER.length),
        heapKiB: bytes.readUInt32LE(HEADER.length + 4),
        codeKiB: bytes.readUInt32LE(HEADER.length + 8),
      },
    };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** A temporary file older than this was left by a killed run: removed when the next cache is written. */
const STALE_TMP_MS = 60_000;

/** Writes the cache beside its final name and renames it over: a reader never sees half a file. */
function writeCache(folder: number, name: string, data: Buffer, writer: CacheFile['writer']): void {
  const tmpName = `${name}.${process.pid}.tmp`;
  try {
    const fd = openSync(
      inFolder(folder, tmpName),
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      const header = Buffer.alloc(HEADER_BYTES);
      HEADER.copy(header);
      [writer.bytecodeBytes, writer.heapKiB, writer.codeKiB].forEach((value, i) =>
        header.writeUInt32LE(Math.min(value, 0xffffffff), HEADER.length + 4 * i),
      );
      for (const part of [header, data]) {
        let offset = 0;
        while (offset < part.length) offset += writeSync(fd, part, offset, part.length - offset);
      }
    } finally {
      closeSync(fd);
    }
    renameSync(inFolder(folder, tmpName), inFolder(folder, name));
    // The same command's caches for other builds or node versions are of no further use, and
    // neither is what a killed run left half-written.
    const prefix = name.slice(0, name.indexOf('@') + 1);
    for (const other of readdirSync(inFolder(folder, '.'))) {
      const path = inFolder(folder, other);
      if (other !== name && other.startsWith(prefix) && other.endsWith('.v8cache')) unlinkSync(path);
      else if (/@[\w.-]+\.v8cache\.\d+\.tmp$/.test(other) && Date.now() - statSync(path).mtimeMs > STALE_TMP_MS)
        unlinkSync(path);
    }
  } catch {
    try {
      unlinkSync(inFolder(folder, tmpName));
    } catch {
      // nothing was written
    }
  }
}

/**
 * Compiles and runs the bundle as Node runs a CommonJS module (the same wrapper and arguments),
 * with the command's code cache when there is a usable one. After a run without one (or with one
 * V8 refused: another node, other flags, another build), the bytecode of everything the command
 * ran is saved as the process exits, for the next run.
 */
export function runWithCompileCache(options: CompileCacheOptions): CacheOutcome {
  const { appFile, env, uid } = options;
  // The identity and the bytes of one open file: a bundle replaced between the two would name the
  // cache of the one it replaced.
  const bundleFd = openSync(appFile, constants.O_RDONLY);
  let bytes: Buffer;
  let identity: BigIntStats;
  try {
    identity = fstatSync(bundleFd, { bigint: true });
    bytes = readFileSync(bundleFd);
  } finally {
    closeSync(bundleFd);
  }
  const source = bytes.toString('latin1');
  const key = commandKey(options.args);
  const wanted = key === undefined ? undefined : cacheFolder(env, uid);
  const folder = wanted === undefined ? undefined : openFolder(wanted, uid);
  const name = folder === undefined || key === undefined ? undefined : cacheName(key, identity, bytes);
  const cached = folder === undefined || name === undefined ? undefined : readCache(folder, name, uid);

  const wrapped = `(function (exports, require, module, __filename, __dirname) { ${source}\n});`;
  const script = withCodeCacheChecksum(
    () => new Script(wrapped, { filename: appFile, ...(cached === undefined ? {} : { cachedData: cached.data }) }),
  );
  const outcome: CacheOutcome =
    key === undefined || wanted === undefined
      ? 'off'
      : folder === undefined
        ? 'unusable'
        : cached === undefined
          ? 'miss'
          : script.cachedDataRejected === true
            ? 'rejected'
            : 'hit';
  if (env.MPPROV_COMPILE_CACHE_DEBUG === '1')
    process.stderr.write(
      `mpprov: compile cache ${outcome}${name === undefined || wanted === undefined ? '' : ` ${wanted}/${name}`}\n`,
    );
  if (folder !== undefined && name !== undefined && outcome !== 'off' && outcome !== 'unusable') {
    // Written at the exit of a run without a usable cache, or of a run that compiled clearly more
    // than the run that wrote the cache it had (HEADER); otherwise only a number or two is read.
    const writer = outcome === 'hit' ? cached?.writer : undefined;
    process.once('exit', () => {
      try {
        const figures = heapFiguresNow();
        const replacesOutsized =
          writer !== undefined && writer.heapKiB > OUTSIZED_HEAP_KIB && figures.heapKiB <= OUTSIZED_HEAP_KIB;
        if (writer !== undefined && !replacesOutsized && !grewPastWriter(figures, writer)) return;
        const bytecodeBytes = bytecodeBytesNow();
        if (env.MPPROV_COMPILE_CACHE_DEBUG === '1' && writer !== undefined)
          process.stderr.write(`mpprov: compile cache bytecode counted (${bytecodeBytes} bytes)\n`);
        if (writer !== undefined && !replacesOutsized && bytecodeBytes <= writer.bytecodeBytes * GROWTH_TO_REWRITE)
          return;
        writeCache(
          folder,
          name,
          withCodeCacheChecksum(() => script.createCachedData()),
          { ...figures, bytecodeBytes },
        );
        if (env.MPPROV_COMPILE_CACHE_DEBUG === '1' && writer !== undefined)
          process.stderr.write(
            `mpprov: compile cache written again (${writer.bytecodeBytes} -> ${bytecodeBytes} bytes of bytecode)\n`,
          );
      } catch {
        // no cache this time: the next run tries again
      }
    });
  } else if (folder !== undefined) {
    closeSync(folder);
  }

  const run = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: unknown,
    filename: string,
    dirname: string,
  ) => void;
  const module = { exports: {}, filename: appFile, id: '.', loaded: false };
  run.call(module.exports, module.exports, createRequire(appFile), module, appFile, dirname(appFile));
  return outcome;
}
