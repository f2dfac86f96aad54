import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

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
 * The long-running commands (the agent, the simulator, the desktop notifier) get no cache: their start-up does not matter, and bytecode read for
 * every function the first run touched would stay resident in the agent for its whole life.
 */
const UNCACHED = new Set(['run', 'simulate', 'notify']);

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

/** The command's cache key: its first word when it is one, `version` for -V/--version, else `other`. */
export function commandKey(args: readonly string[]): string | undefined {
  const first = args[0];
  if (first === '-V' || first === '--version') return 'version';
  if (first === undefined || !/^[a-z][a-z-]{0,31}$/.test(first)) return 'other';
  return UNCACHED.has(first) ? undefined : first;
}

/** FNV-1a, 32 bits: names the bundle build and node a cache belongs to (not a security check). */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/** Whether `path` is ours alone: owned by `uid`, writable by nobody else, and of the right kind. */
function ownedAlone(info: { uid: number; mode: number }, uid: number): boolean {
  return info.uid === uid && (info.mode & 0o022) === 0;
}

/** The folder, made (0700) if missing; undefined unless it is a real folder that only `uid` can write. */
function usableFolder(folder: string, uid: number): string | undefined {
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const info = lstatSync(folder);
    return info.isDirectory() && ownedAlone(info, uid) ? folder : undefined;
  } catch {
    return undefined;
  }
}

/** The cache file's bytes, or undefined: missing, a link, someone else's, writable by others, or too large. */
function readCache(file: string, uid: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || !ownedAlone(info, uid) || info.size === 0 || info.size > MAX_CACHE_BYTES) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Writes the cache beside its final name and renames it over: a reader never sees half a file. */
function writeCache(folder: string, name: string, data: Buffer): void {
  const file = join(folder, name);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      let offset = 0;
      while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
    // The same command's caches for other builds or node versions are of no further use.
    const prefix = name.slice(0, name.lastIndexOf('-') + 1);
    for (const other of readdirSync(folder)) {
      if (other !== name && other.startsWith(prefix) && other.endsWith('.v8cache')) unlinkSync(join(folder, other));
    }
  } catch {
    try {
      unlinkSync(tmp);
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
  const source = readFileSync(appFile, 'latin1');
  const key = commandKey(options.args);
  const wanted = key === undefined ? undefined : cacheFolder(env, uid);
  const folder = wanted === undefined ? undefined : usableFolder(wanted, uid);
  let name: string | undefined;
  let cached: Buffer | undefined;
  if (folder !== undefined && key !== undefined) {
    const app = statSync(appFile);
    name = `${key}-${fnv1a([process.version, process.arch, appFile, app.size, app.mtimeMs].join('\0'))}.v8cache`;
    cached = readCache(join(folder, name), uid);
  }

  const wrapped = `(function (exports, require, module, __filename, __dirname) { ${source}\n});`;
  const script = new Script(wrapped, { filename: appFile, ...(cached === undefined ? {} : { cachedData: cached }) });
  const outcome: CacheOutcome = key === undefined || wanted === undefined ? 'off' : folder === undefined ? 'unusable' : cached === undefined ? 'miss' : script.cachedDataRejected === true ? 'rejected' : 'hit';
  if (env.MPPROV_COMPILE_CACHE_DEBUG === '1') process.stderr.write(`mpprov: compile cache ${outcome}${name === undefined ? '' : ` ${join(folder ?? '', name)}`}\n`);
  if ((outcome === 'miss' || outcome === 'rejected') && folder !== undefined && name !== undefined) {
    const cacheName = name;
    process.once('exit', () => {
      try {
        writeCache(folder, cacheName, script.createCachedData());
      } catch {
        // no cache this time: the next run tries again
      }
    });
  }

  const run = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown, filename: string, dirname: string) => void;
  const module = { exports: {}, filename: appFile, id: '.', loaded: false };
  run.call(module.exports, module.exports, createRequire(appFile), module, appFile, dirname(appFile));
  return outcome;
}
