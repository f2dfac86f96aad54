import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { worldReadableCli } from '../support/world-readable-cli.js';

/**
 * `mpprov status` run by someone who cannot read the agent's state (a technician without sudo)
 * or with a state directory that is not there: a sentence on stderr and a non-zero exit, never
 * "recent jobs: none yet". The unprivileged run is real: setpriv drops to nobody, running a copy
 * of the built CLI that user can load (the repository may sit under a 0700 folder: a second CI
 * run from a clone there failed when this test still linked the checkout's node_modules).
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

  it(
    'as an unprivileged user against a root-only state directory: permission denied, sudo named, exit 1',
    { timeout: 30_000 },
    async () => {
      if (process.getuid?.() !== 0)
        throw new Error('this test drops from root to nobody with setpriv: run it as root (the CI container is)');
      dir = await mkdtemp(join(tmpdir(), 'mpprov-status-'));
      await chmod(dir, 0o755);
      // A copy of the CLI that nobody can load, whatever folder holds the checkout.
      const cli = worldReadableCli();
      // The agent's state as it leaves it: root only (UMask=0077).
      const state = join(dir, 'state');
      await mkdir(state, { mode: 0o700 });
      await writeFile(join(state, 'jobs.jsonl'), '', { mode: 0o600 });

      const result = await run(
        'setpriv',
        ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, cli, 'status', '--state-dir', state],
        {
          encoding: 'utf8',
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', HOME: '/nonexistent' },
        },
      ).then(
        (ok) => ({ code: 0, stdout: ok.stdout, stderr: ok.stderr }),
        (error: { code?: number; stdout?: string; stderr?: string }) => ({
          code: error.code,
          stdout: error.stdout ?? '',
          stderr: error.stderr ?? '',
        }),
      );
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        `mpprov status: cannot read ${state}: permission denied (the agent keeps its state readable by root only); run sudo mpprov status\n`,
      );
      // The same state read by root: no problem, the (empty) history is shown.
      const asRoot = await runCli(['status', '--state-dir', state]);
      expect(asRoot.code).toBe(0);
      expect(asRoot.stdout).toContain('none yet');
    },
  );
});
