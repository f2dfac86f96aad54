import { chmod, lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createJobBoard } from '../../src/agent/job-board.js';
import { runtimeDirectory, startStatusFile, type StatusFile } from '../../src/agent/status-file.js';
import { Redactor } from '../../src/core/redact.js';
import { AgentStatus } from '../../src/core/agent-status.js';

/** status.json as the contract says: runtime dir, 0644 despite the umask, throttled, at once at a job's end, stopped at the end. */

const dirs: string[] = [];
let file: StatusFile | undefined;
afterEach(async () => {
  await file?.close();
  file = undefined;
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

// Parsed with the schema `mpprov notify` reads it with (strict here: no field the reader would drop).
const read = async (path: string): Promise<AgentStatus> =>
  AgentStatus.strict().parse(JSON.parse(await readFile(path, 'utf8')));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('status.json', () => {
  it('lives in $RUNTIME_DIRECTORY (its first path) else /run/mpprov', () => {
    expect(runtimeDirectory({})).toBe('/run/mpprov');
    expect(runtimeDirectory({ RUNTIME_DIRECTORY: '' })).toBe('/run/mpprov');
    expect(runtimeDirectory({ RUNTIME_DIRECTORY: '/run/mpprov:/run/other' })).toBe('/run/mpprov');
    expect(runtimeDirectory({ RUNTIME_DIRECTORY: '/tmp/x' })).toBe('/tmp/x');
  });

  it('is written 0644 in a 0755 folder it creates, throttled while a job runs, at once when it ends, and marked stopped', async () => {
    const base = await mkdtemp(join(tmpdir(), 'mpprov-run-'));
    dirs.push(base);
    const dir = join(base, 'mpprov');
    const board = createJobBoard({ redactor: new Redactor(), version: '0.1.0', hostname: 'laptop' });
    const problems: string[] = [];
    const oldMask = process.umask(0o077);
    try {
      file = startStatusFile({ dir, source: board, onProblem: (m) => problems.push(m), intervalMs: 400 });
      await sleep(100);
      expect(file.path).toBe(join(dir, 'status.json'));
      expect((await stat(file.path)).mode & 0o777).toBe(0o644);
      expect((await stat(dir)).mode & 0o777).toBe(0o755);
      expect(await read(file.path)).toMatchObject({ format: 1, agent: { version: '0.1.0', stopped: false }, jobs: [] });

      board.start('j20261123-100000-ab12', {
        kind: 'stick',
        label: 'MPSTICK',
        location: '/media/MPSTICK',
        config: 'mpprov.yaml',
        started: new Date(),
        stage: 'reading the stick',
      });
      board.stage('j20261123-100000-ab12', 'applying');
      await sleep(100);
      // Within the interval of the last write: not yet.
      expect((await read(file.path)).jobs).toEqual([]);
      await sleep(450);
      expect((await read(file.path)).jobs.map((j) => `${j.stage} ${j.banner}`)).toEqual(['applying WORKING']);

      board.stage('j20261123-100000-ab12', 'finishing');
      board.end('j20261123-100000-ab12', { result: 'CHANGED', summary: 'done', finished: new Date(), released: true });
      await sleep(50);
      // The end is written at once, not after the interval.
      expect((await read(file.path)).jobs.map((j) => `${j.banner} ${j.result} ${String(j.released)}`)).toEqual([
        'SAFE TO REMOVE CHANGED true',
      ]);

      board.stop();
      await file.close();
      file = undefined;
      expect((await read(join(dir, 'status.json'))).agent.stopped).toBe(true);
      expect(problems).toEqual([]);
    } finally {
      process.umask(oldMask);
    }
  });

  it('a folder it cannot write is said once, and the board goes on', async () => {
    const base = await mkdtemp(join(tmpdir(), 'mpprov-run-'));
    dirs.push(base);
    const board = createJobBoard({ redactor: new Redactor(), version: '0.1.0', hostname: 'laptop' });
    const problems: string[] = [];
    // A regular file where the folder should be: mkdir fails whoever runs the test (root too).
    const blocker = join(base, 'blocker');
    await (await import('node:fs/promises')).writeFile(blocker, '');
    file = startStatusFile({
      dir: join(blocker, 'mpprov'),
      source: board,
      onProblem: (m) => problems.push(m),
      intervalMs: 10,
    });
    board.start('j20261123-100000-ab12', {
      kind: 'profile',
      label: 'p.yaml',
      location: '/p',
      config: 'p.yaml',
      started: new Date(),
      stage: 'x',
    });
    board.end('j20261123-100000-ab12', { result: 'CHANGED', summary: 'done', finished: new Date() });
    await sleep(100);
    expect(problems).toEqual([
      `cannot write the status file ${join(blocker, 'mpprov', 'status.json')} (ENOTDIR); the agent goes on without it`,
    ]);
  });

  it('never follows a link planted as the temporary file: the target stays as it was and status.json is a plain file', async () => {
    const base = await mkdtemp(join(tmpdir(), 'mpprov-run-'));
    dirs.push(base);
    const dir = join(base, 'mpprov');
    await mkdir(dir, { mode: 0o755 });
    const victim = join(base, 'victim');
    await writeFile(victim, 'root-owned file\n', { mode: 0o600 });
    await symlink(victim, join(dir, 'status.json.tmp'));
    const board = createJobBoard({ redactor: new Redactor(), version: '0.1.0', hostname: 'laptop' });
    const problems: string[] = [];
    file = startStatusFile({ dir, source: board, onProblem: (m) => problems.push(m), intervalMs: 10 });
    await file.close();
    file = undefined;
    expect(await readFile(victim, 'utf8')).toBe('root-owned file\n');
    expect((await stat(victim)).mode & 0o777).toBe(0o600);
    const written = await lstat(join(dir, 'status.json'));
    expect(written.isFile()).toBe(true);
    expect(written.mode & 0o777).toBe(0o644);
    expect((await read(join(dir, 'status.json'))).agent.stopped).toBe(false);
    expect(problems).toEqual([]);
  });

  it('refuses a runtime folder that is a link or that other users may write to, once, and writes nothing there', async () => {
    const base = await mkdtemp(join(tmpdir(), 'mpprov-run-'));
    dirs.push(base);
    const elsewhere = join(base, 'elsewhere');
    await mkdir(elsewhere, { mode: 0o755 });
    const linked = join(base, 'linked');
    await symlink(elsewhere, linked);
    const open = join(base, 'open');
    await mkdir(open);
    await chmod(open, 0o777);
    for (const [dir, why] of [
      [linked, `${linked} is a symbolic link, not a folder`],
      [open, `${open} is writable by other users (mode 777)`],
    ] as const) {
      const board = createJobBoard({ redactor: new Redactor(), version: '0.1.0', hostname: 'laptop' });
      const problems: string[] = [];
      file = startStatusFile({ dir, source: board, onProblem: (m) => problems.push(m), intervalMs: 10 });
      board.start('j20261123-100000-ab12', {
        kind: 'profile',
        label: 'p.yaml',
        location: '/p',
        config: 'p.yaml',
        started: new Date(),
        stage: 'x',
      });
      board.end('j20261123-100000-ab12', { result: 'CHANGED', summary: 'done', finished: new Date() });
      await file.close();
      file = undefined;
      expect(problems).toEqual([
        `cannot write the status file ${join(dir, 'status.json')} (${why}); the agent goes on without it`,
      ]);
    }
    await expect(lstat(join(elsewhere, 'status.json'))).rejects.toThrow(/ENOENT/);
    await expect(lstat(join(open, 'status.json'))).rejects.toThrow(/ENOENT/);
  });
});
