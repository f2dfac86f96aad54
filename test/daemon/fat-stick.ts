import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, openSync, closeSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Real FAT sticks for the daemon tests: an image made with mkfs.vfat, files put in with mtools'
 * mcopy, mounted through FUSE with fusefat (this kernel has no vfat driver), read back with
 * mtools after unmounting. docs/fat-sticks.md lists these tools' quirks.
 * Everything runs asynchronously: the simulated devices live in the test's own event loop.
 */

const run = promisify(execFile);
/** After a read-write fusefat mount mtools refuses the image without this. */
const MTOOLS_ENV = { ...process.env, MTOOLS_SKIP_CHECK: '1' };

/** Fails with a sentence that says what to install, rather than a cryptic spawn error later. */
export function requireFatTools(): void {
  if (!existsSync('/dev/fuse')) {
    throw new Error(
      '/dev/fuse is missing: the FAT stick tests mount images with fusefat (FUSE); run them on a machine or container with /dev/fuse',
    );
  }
  const path = (process.env.PATH ?? '').split(':');
  for (const [tool, pkg] of [
    ['mkfs.vfat', 'dosfstools'],
    ['mcopy', 'mtools'],
    ['fusefat', 'fusefat'],
    ['fusermount', 'fuse'],
  ] as const) {
    if (
      !path.some((dir) => existsSync(join(dir, tool))) &&
      !existsSync(`/usr/sbin/${tool}`) &&
      !existsSync(`/sbin/${tool}`)
    ) {
      throw new Error(`${tool} is missing: apt-get install -y ${pkg} (.ci/run installs it)`);
    }
  }
}

export async function makeFatImage(
  image: string,
  label: string,
  files: Record<string, string | Buffer>,
  sizeMiB = 8,
): Promise<void> {
  await mkdir(dirname(image), { recursive: true });
  await writeFile(image, '');
  await run('truncate', ['-s', `${sizeMiB}M`, image]);
  const mkfs = existsSync('/usr/sbin/mkfs.vfat') ? '/usr/sbin/mkfs.vfat' : 'mkfs.vfat';
  await run(mkfs, ['-n', label, image]);
  const staging = await mkdtemp(join(tmpdir(), 'mpprov-fat-'));
  try {
    const folders = new Set<string>();
    for (const path of Object.keys(files)) {
      const parts = path.split('/').slice(0, -1);
      for (let i = 1; i <= parts.length; i++) folders.add(parts.slice(0, i).join('/'));
    }
    for (const folder of [...folders].sort()) await run('mmd', ['-i', image, `::${folder}`], { env: MTOOLS_ENV });
    let n = 0;
    for (const [path, content] of Object.entries(files)) {
      const local = join(staging, `f${n++}`);
      await writeFile(local, content);
      await run('mcopy', ['-i', image, local, `::${path}`], { env: MTOOLS_ENV });
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** A file from the image (after unmounting), or undefined when it is not there. */
export async function readFatFile(image: string, path: string): Promise<string | undefined> {
  try {
    const { stdout } = await run('mcopy', ['-n', '-i', image, `::${path}`, '-'], {
      env: MTOOLS_ENV,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch {
    return undefined;
  }
}

/** The names at the image's root, as mtools lists them (after unmounting). */
export async function rootNames(image: string): Promise<string[]> {
  const { stdout } = await run('mdir', ['-i', image, '-b', '::'], { env: MTOOLS_ENV, encoding: 'utf8' });
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('::/'))
    .map((l) => l.slice(3));
}

export async function listFat(image: string): Promise<string> {
  const { stdout } = await run('mdir', ['-i', image, '-/', '::'], { env: MTOOLS_ENV, encoding: 'utf8' });
  return stdout;
}

export interface MountedStick {
  mountPoint: string;
  /** `fusermount -u` and wait for fusefat to exit. */
  unmount(): Promise<void>;
  /** Resolves when fusefat has exited: the stick was unmounted, by whoever did it. */
  exited: Promise<void>;
  /** True while the mount point is in the mount table. */
  mounted(): Promise<boolean>;
  /** How fusefat ended (`status 0`, `SIGKILL`), once `exited` has resolved. */
  endedBy(): string | undefined;
  /** A yank: fusefat killed with SIGKILL, then the dead mount detached (`fusermount -u -z`). */
  pull(): Promise<void>;
  /**
   * fusefat stopped (SIGSTOP): every file operation on the stick waits, as on a stick that hangs
   * mid-write; `resume` (SIGCONT) lets them go on. unmount and pull resume it first.
   */
  pause(): void;
  resume(): void;
}

async function inMountTable(mountPoint: string): Promise<boolean> {
  const table = await readFile('/proc/self/mountinfo', 'utf8');
  return table.split('\n').some((line) => line.split(' ')[4] === mountPoint);
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * strace's arguments that SIGKILL fusefat on entering its `n`th write(2) to `image` (that write not
 * done): the power lost between two of fusefat's writes, at exactly the moment a test names. Only
 * writes to the image count (-P), and fusefat runs single-threaded (-s), since strace counts per thread.
 */
export function killAtWrite(image: string, n: number): string[] {
  return ['-f', '-o', '/dev/null', '-P', image, '-e', 'trace=write', '-e', `inject=write:signal=SIGKILL:when=${n}`];
}

/**
 * Mounts `image` at `mountPoint` (created, must be empty) with `fusefat -f`, a child under the
 * test's control. Its chatty debug output goes to a file: a pipe nobody drains would block it.
 * With `killAtImageWrite`, fusefat runs under strace and dies by SIGKILL at that write to the image
 * (killAtWrite); `exited` resolves then, and `pull` detaches the dead mount.
 */
export async function mountFat(
  image: string,
  mountPoint: string,
  options: { readOnly?: boolean; logFile: string; killAtImageWrite?: number },
): Promise<MountedStick> {
  await mkdir(mountPoint, { recursive: true });
  const out = openSync(options.logFile, 'a');
  let child: ChildProcess;
  try {
    const args =
      options.readOnly === true ? ['-f', '-o', 'ro', image, mountPoint] : ['-f', '-o', 'rw+', image, mountPoint];
    child =
      options.killAtImageWrite === undefined
        ? spawn('fusefat', args, { stdio: ['ignore', out, out] })
        : spawn('strace', [...killAtWrite(image, options.killAtImageWrite), 'fusefat', '-s', ...args], {
            stdio: ['ignore', out, out],
          });
  } finally {
    closeSync(out);
  }
  let exitedEarly: string | undefined;
  let endedBy: string | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      endedBy = signal ?? `status ${code}`;
      exitedEarly = `fusefat exited (${endedBy})`;
      resolve();
    }),
  );
  try {
    await waitUntil(
      async () => {
        if (exitedEarly !== undefined) throw new Error(exitedEarly);
        return inMountTable(mountPoint);
      },
      10_000,
      `fusefat to mount ${mountPoint}`,
    );
  } catch (error) {
    // What fusefat said is the only clue to why a mount did not happen.
    const said = (await readFile(options.logFile, 'utf8').catch(() => '')).split('\n').slice(-15).join('\n');
    throw new Error(`${(error as Error).message} (${image}); its last output:\n${said}`, { cause: error });
  }
  let gone = false;
  let paused = false;
  const resume = (): void => {
    if (paused) child.kill('SIGCONT');
    paused = false;
  };
  return {
    mountPoint,
    exited,
    mounted: () => inMountTable(mountPoint),
    endedBy: () => endedBy,
    pause() {
      paused = child.kill('SIGSTOP');
    },
    resume,
    async unmount() {
      if (gone) return;
      gone = true;
      resume();
      // The agent releases a stick itself when its job is done (when_done.eject): then only wait for fusefat.
      await run('fusermount', ['-u', mountPoint]).catch(async () => {
        if (!(await inMountTable(mountPoint))) return;
        await new Promise((r) => setTimeout(r, 300));
        if (await inMountTable(mountPoint)) await run('fusermount', ['-u', '-z', mountPoint]);
      });
      await exited;
    },
    async pull() {
      if (gone) return;
      gone = true;
      resume();
      child.kill('SIGKILL');
      await exited;
      await run('fusermount', ['-u', '-z', mountPoint]).catch(() => undefined);
      await waitUntil(async () => !(await inMountTable(mountPoint)), 5_000, `${mountPoint} to leave the mount table`);
    },
  };
}
