import { execFile } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CACHED_COMMANDS, cacheFolder, commandKey } from '../../src/cli/compile-cache.js';
import { repoRoot } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * The bundle's launcher (dist/mpprov.cjs, /usr/bin/mpprov) runs mpprov-app.cjs with V8's code
 * cache. Run here as the real child process, with MPPROV_COMPILE_CACHE_DEBUG=1 saying on stderr
 * what the cache did: a first run writes it, the next one runs from it, and a cache that is not
 * the user's alone (a link, another owner, writable by others, a folder others can write) is never
 * read, while the command itself works the same whatever the cache is.
 */

const run = promisify(execFile);
const launcher = join(repoRoot, 'dist/mpprov.cjs');
const profile = join(repoRoot, 'profiles/peap-mschapv2.yaml');
const NOBODY = 65534;

async function mpprov(args: string[], cache: string): Promise<{ stdout: string; said: string; code: number }> {
  const env = { ...process.env, NO_COLOR: '1', MPPROV_COMPILE_CACHE: cache, MPPROV_COMPILE_CACHE_DEBUG: '1' };
  try {
    const { stdout, stderr } = await run(process.execPath, [launcher, ...args], {
      cwd: repoRoot,
      env,
      encoding: 'utf8',
    });
    return { stdout, said: /^mpprov: compile cache (\w+)/m.exec(stderr)?.[1] ?? `nothing said: ${stderr}`, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return {
      stdout: failed.stdout,
      said: /^mpprov: compile cache (\w+)/m.exec(failed.stderr)?.[1] ?? `nothing said: ${failed.stderr}`,
      code: failed.code,
    };
  }
}

/** Everything the cache said on stderr for one run: hit/miss, `bytecode counted`, `written again`. */
async function cacheSaysIn(folder: string, args: string[]): Promise<string[]> {
  const { stderr } = await run(process.execPath, [launcher, ...args], {
    cwd: repoRoot,
    env: { ...process.env, NO_COLOR: '1', MPPROV_COMPILE_CACHE: folder, MPPROV_COMPILE_CACHE_DEBUG: '1' },
    encoding: 'utf8',
  }).catch((failed: { stderr: string }) => failed);
  return [...stderr.matchAll(/^mpprov: compile cache (\w+( again| counted)?)/gm)].map((m) => m[1] ?? '');
}

const cacheFiles = (folder: string): string[] => readdirSync(folder).filter((name) => name.endsWith('.v8cache'));

describe("the bundle runs from V8's code cache", () => {
  it("a first run writes the command's cache (0600 in a 0700 folder), the next runs from it, with the same output", async () => {
    const folder = join(tempFolder('compile-cache'), 'cache');
    const uncached = await mpprov(['validate', '--json', profile], 'off');
    expect(uncached.said).toBe('off');
    const first = await mpprov(['validate', '--json', profile], folder);
    expect(first.said).toBe('miss');
    const [file] = cacheFiles(folder);
    expect(file).toMatch(/^validate@v[\d.]+-\w+-[0-9a-f]+(-[0-9a-f]+){4}\.v8cache$/);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(join(folder, file!)).mode & 0o777).toBe(0o600);
    const second = await mpprov(['validate', '--json', profile], folder);
    expect(second.said).toBe('hit');
    for (const result of [first, second]) expect(result).toMatchObject({ code: 0, stdout: uncached.stdout });

    // Each command has its own; the long-running ones none at all.
    expect((await mpprov(['--version'], folder)).said).toBe('miss');
    expect((await mpprov(['simulate', '--help'], folder)).said).toBe('off');
    expect(
      cacheFiles(folder)
        .map((name) => name.split('@')[0])
        .sort(),
    ).toEqual(['validate', 'version']);
  });

  it("a cache V8 refuses (garbage, another build) is replaced, and a new build's cache replaces the old one", async () => {
    const folder = join(tempFolder('compile-cache'), 'cache');
    await mpprov(['validate', profile], folder);
    const [file] = cacheFiles(folder);
    // Garbage after mpprov's header (compile-cache.ts): V8 refuses it.
    const header = readFileSync(join(folder, file!)).subarray(0, 20);
    writeFileSync(join(folder, file!), Buffer.concat([header, Buffer.alloc(200_000, 0x5a)]), { mode: 0o600 });
    const refused = await mpprov(['validate', profile], folder);
    expect(refused).toMatchObject({ said: 'rejected', code: 0 });
    expect(refused.stdout).toContain('valid (0 errors');
    expect((await mpprov(['validate', profile], folder)).said).toBe('hit');

    // A cache of an earlier build (another name for the same command) goes when this one is written;
    // a file without the header is not even given to V8.
    const old = join(folder, `validate@${process.version}-${process.arch}-1-2-3-4-5.v8cache`);
    writeFileSync(old, 'an older build', { mode: 0o600 });
    writeFileSync(join(folder, file!), Buffer.alloc(200_000, 0x5a), { mode: 0o600 });
    expect((await mpprov(['validate', profile], folder)).said).toBe('miss');
    expect(cacheFiles(folder)).toEqual([file]);
    expect((await mpprov(['validate', profile], folder)).said).toBe('hit');
  });

  it('a cache a short run wrote is written again, once, by the first run that compiles clearly more', async () => {
    const folder = join(tempFolder('compile-cache'), 'cache');
    const cacheSays = (args: string[]): Promise<string[]> => cacheSaysIn(folder, args);
    // A file that is not there: the run ends before validation, its cache holds little.
    expect(await cacheSays(['validate', join(tempFolder('compile-cache'), 'missing.yaml')])).toEqual(['miss']);
    const [file] = cacheFiles(folder);
    const short = statSync(join(folder, file!)).size;
    // A whole validation: the cache is hit, and written again at the end with what it compiled.
    expect(await cacheSays(['validate', profile])).toEqual(['hit', 'bytecode counted', 'written again']);
    expect(statSync(join(folder, file!)).size).toBeGreaterThan(short);
    // Once: the next runs of either kind find what they need and write nothing; nor do they count
    // their bytecode (a walk of the whole heap at every exit), their heap and code no larger than
    // the writer's.
    const written = statSync(join(folder, file!)).mtimeMs;
    expect(await cacheSays(['validate', profile])).toEqual(['hit']);
    expect(await cacheSays(['validate', join(tempFolder('compile-cache'), 'missing.yaml')])).toEqual(['hit']);
    expect(statSync(join(folder, file!)).mtimeMs).toBe(written);
  });

  it('a cache a run of outsized data wrote (a large refused stick) is replaced by the next ordinary run', async () => {
    const folder = join(tempFolder('compile-cache'), 'cache');
    const cacheSays = (args: string[]): Promise<string[]> => cacheSaysIn(folder, args);
    // Just under the stick's 256 KiB: refused at the schema, so the run compiles less than a whole
    // validation, but its YAML leaves a heap four times an ordinary run's, and its hot loops more
    // baseline code: no later run's figures pass the writer's, and the bytecode was never counted.
    const stick = join(tempFolder('compile-cache'), 'mpprov.yaml');
    const lines = ['version: 1', 'device:'];
    for (let i = 0; lines.join('\n').length < 240_000; i += 1) lines.push(`  bogus_key_${i}: [${i}, x${i}, {a: ${i}}]`);
    writeFileSync(stick, `${lines.join('\n')}\n`);
    expect(await cacheSays(['validate', stick])).toEqual(['miss']);
    expect(await cacheSays(['validate', profile])).toEqual(['hit', 'bytecode counted', 'written again']);
    expect(await cacheSays(['validate', profile])).toEqual(['hit']);
  });

  it('a damaged cache (a torn write, a zeroed block) is refused by its checksum, never run, and rewritten', async () => {
    const folder = join(tempFolder('compile-cache'), 'cache');
    await mpprov(['validate', profile], folder);
    const [file] = cacheFiles(folder);
    const path = join(folder, file!);
    const bytes = readFileSync(path);
    // Zeroes in the middle of the payload: its header is intact, so only the checksum can tell.
    bytes.fill(0, Math.floor(bytes.length / 2), Math.floor(bytes.length / 2) + 16_384);
    writeFileSync(path, bytes, { mode: 0o600 });
    const damaged = await mpprov(['validate', profile], folder);
    expect(damaged).toMatchObject({ said: 'rejected', code: 0 });
    expect(damaged.stdout).toContain('valid (0 errors');
    expect((await mpprov(['validate', profile], folder)).said).toBe('hit');
  });

  it("another bundle of the same size and time (cp -p, a reproducible build) never runs the old one's cache", async () => {
    const folder = join(tempFolder('compile-cache'), 'cache');
    const copy = tempFolder('compile-cache');
    await run('cp', ['-p', launcher, join(repoRoot, 'dist/mpprov-app.cjs'), copy]);
    const copied = join(copy, 'mpprov.cjs');
    const version = async (): Promise<{ out: string; said: string }> => {
      const { stdout, stderr } = await run(process.execPath, [copied, '--version'], {
        env: { ...process.env, MPPROV_COMPILE_CACHE: folder, MPPROV_COMPILE_CACHE_DEBUG: '1' },
        encoding: 'utf8',
      });
      return { out: stdout.trim(), said: /compile cache (\w+)/.exec(stderr)?.[1] ?? stderr };
    };
    const first = await version();
    expect(await version()).toEqual({ out: first.out, said: 'hit' });
    // The same length, the same modification time, another version inlined.
    const app = join(copy, 'mpprov-app.cjs');
    const before = statSync(app);
    const text = readFileSync(app, 'latin1');
    const other = first.out.replace(/\d(?=[^\d]*$)/, (d) => String((Number(d) + 1) % 10));
    expect(text.split(JSON.stringify(first.out)).length).toBe(2);
    writeFileSync(app, text.replace(JSON.stringify(first.out), JSON.stringify(other)), 'latin1');
    utimesSync(app, before.atime, before.mtime);
    expect(statSync(app).size).toBe(before.size);
    expect(await version()).toEqual({ out: other, said: 'miss' });
  });

  it("never reads a cache that is not the user's alone: a link, another owner's file, a file others can write", async () => {
    const folder = join(tempFolder('compile-cache'), 'cache');
    await mpprov(['validate', profile], folder);
    const [file] = cacheFiles(folder);
    const path = join(folder, file!);
    const good = readFileSync(path);

    // A link to a good cache: not followed (O_NOFOLLOW), and replaced by a file, its target untouched.
    const elsewhere = join(tempFolder('compile-cache'), 'planted.v8cache');
    writeFileSync(elsewhere, good, { mode: 0o600 });
    writeFileSync(path, ''); // removed by the link below
    await run('rm', [path]);
    symlinkSync(elsewhere, path);
    expect((await mpprov(['validate', profile], folder)).said).toBe('miss');
    expect(statSync(path).isFile()).toBe(true);
    expect(readFileSync(elsewhere).equals(good)).toBe(true);

    for (const spoil of [
      (p: string) => chownSync(p, NOBODY, NOBODY),
      (p: string) => chmodSync(p, 0o620),
      (p: string) => chmodSync(p, 0o602),
    ]) {
      writeFileSync(path, good, { mode: 0o600 });
      chmodSync(path, 0o600);
      chownSync(path, process.getuid!(), process.getgid!());
      expect((await mpprov(['validate', profile], folder)).said).toBe('hit');
      spoil(path);
      const result = await mpprov(['validate', profile], folder);
      expect(result).toMatchObject({ said: 'miss', code: 0 });
    }
  });

  it("a folder others can write, or another user's, or none to be had: no cache, and the command works", async () => {
    const base = tempFolder('compile-cache');
    const open = join(base, 'open');
    mkdirSync(open, { mode: 0o700 });
    chmodSync(open, 0o777);
    const foreign = join(base, 'foreign');
    mkdirSync(foreign, { mode: 0o700 });
    chownSync(foreign, NOBODY, NOBODY);
    const notAFolder = join(base, 'file');
    writeFileSync(notAFolder, 'x');
    for (const folder of [open, foreign, join(notAFolder, 'cache')]) {
      const result = await mpprov(['validate', profile], folder);
      expect(result, folder).toMatchObject({ said: 'unusable', code: 0 });
      expect(result.stdout).toContain('valid (0 errors');
    }
    expect(readdirSync(open)).toEqual([]);
    expect(readdirSync(foreign)).toEqual([]);
  });
});

describe('where the cache lives and which command it is for', () => {
  it("root: /var/cache/mpprov, systemd's CACHE_DIRECTORY first; others: XDG_CACHE_HOME, else ~/.cache; off when asked", () => {
    expect(cacheFolder({ HOME: '/root' }, 0)).toBe('/var/cache/mpprov');
    expect(cacheFolder({ CACHE_DIRECTORY: '/var/cache/mpprov-unit' }, 0)).toBe('/var/cache/mpprov-unit');
    expect(cacheFolder({ HOME: '/home/tech', XDG_CACHE_HOME: '/home/tech/.xdg' }, 1000)).toBe('/home/tech/.xdg/mpprov');
    expect(cacheFolder({ HOME: '/home/tech' }, 1000)).toBe('/home/tech/.cache/mpprov');
    expect(cacheFolder({ HOME: 'relative', XDG_CACHE_HOME: 'relative' }, 1000)).toBeUndefined();
    expect(cacheFolder({ MPPROV_COMPILE_CACHE: 'off', HOME: '/root' }, 0)).toBeUndefined();
    expect(cacheFolder({ MPPROV_COMPILE_CACHE: '/srv/cache', HOME: '/root' }, 0)).toBe('/srv/cache');
  });

  it('one cache per command; none for run, simulate and notify; any other first word shares "other"', () => {
    expect(commandKey(['validate', 'x.yaml'])).toBe('validate');
    expect(commandKey(['--version'])).toBe('version');
    expect(commandKey(['-V'])).toBe('version');
    expect(commandKey(['run'])).toBeUndefined();
    expect(commandKey(['simulate', '--port', '1'])).toBeUndefined();
    expect(commandKey(['notify'])).toBeUndefined();
    expect(commandKey([])).toBe('other');
    expect(commandKey(['../../etc/passwd'])).toBe('other');
    expect(commandKey(['--help'])).toBe('other');
    // A mistyped word shares "other" rather than making a cache of its own.
    expect(commandKey(['frobnicate'])).toBe('other');
    expect(commandKey(['secrets'])).toBe('other');
  });

  it('knows every command of the CLI: the short ones are cached, the long-running ones not', async () => {
    const { stdout } = await run(process.execPath, [join(repoRoot, 'dist/cli/main.js'), 'describe-cli'], {
      encoding: 'utf8',
    });
    const names = (JSON.parse(stdout) as { commands: { name: string }[] }).commands.map((c) => c.name);
    for (const name of names)
      expect(commandKey([name]), name).toBe(['run', 'simulate', 'notify', 'observe'].includes(name) ? undefined : name);
    expect(CACHED_COMMANDS.filter((name) => !names.includes(name))).toEqual(['describe-cli', 'help']);
  });
});
