import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEntry, repoRoot, runCli } from '../support/run-cli.js';

/**
 * `mpprov status` run by someone who cannot read the agent's state (a technician without sudo)
 * or with a state directory that is not there: a sentence on stderr and a non-zero exit, never
 * "recent jobs: none yet". The unprivileged run is real: setpriv drops to nobody, running a copy
 * of the built CLI copied where nobody can read it (the repository may sit under a 0700 folder).
 */

const run = promisify(execFile);

describe('mpprov status without access to the state directory', () => {
  let dir: string;
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('a missing state directory: says so and exits 1', async () => {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-status-'));
    const missing = join(dir, 'nowhere');
    const result = await runCli(['status', '--state-dir', missing]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `mpprov status: the state directory ${missing} does not exist: the agent has not run with it yet, or agent.yaml's state_dir names another folder (give it with --state-dir)\n`,
    );
  });

  it('as an unprivileged user against a root-only state directory: permission denied, sudo named, exit 1', { timeout: 30_000 }, async () => {
    if (process.getuid?.() !== 0) throw new Error('this test drops from root to nobody with setpriv: run it as root (the CI container is)');
    dir = await mkdtemp(join(tmpdir(), 'mpprov-status-'));
    await chmod(dir, 0o755);
    // A copy of the CLI that nobody can read and run, with the dependencies beside it.
    const cli = join(dir, 'cli');
    await mkdir(cli, { mode: 0o755 });
    await cp(join(repoRoot, 'dist'), join(cli, 'dist'), { recursive: true });
    await cp(join(repoRoot, 'package.json'), join(cli, 'package.json'));
    await symlink(await realpath(join(repoRoot, 'node_modules')), join(cli, 'node_modules'));
    await run('chmod', ['-R', 'a+rX', cli]);
    // The agent's state as it leaves it: root only (UMask=0077).
    const state = join(dir, 'state');
    await mkdir(state, { mode: 0o700 });
    await writeFile(join(state, 'jobs.jsonl'), '', { mode: 0o600 });

    const result = await run('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, join(cli, cliEntry), 'status', '--state-dir', state], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', HOME: '/nonexistent' },
    }).then(
      (ok) => ({ code: 0, stdout: ok.stdout, stderr: ok.stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code, stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
    );
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`mpprov status: cannot read ${state}: permission denied (the agent keeps its state readable by root only); run sudo mpprov status\n`);
    // The same state read by root: no problem, the (empty) history is shown.
    const asRoot = await runCli(['status', '--state-dir', state]);
    expect(asRoot.code).toBe(0);
    expect(asRoot.stdout).toContain('none yet');
  });
});
