import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/run-cli.js';

const run = promisify(execFile);

/**
 * The compile cache's folder comes from the environment (MPPROV_COMPILE_CACHE, CACHE_DIRECTORY,
 * XDG_CACHE_HOME, HOME). Under /proc or /sys, where the file system refuses a new folder with
 * ENOENT although its parent exists, Node's recursive mkdir never returns: every command, plan
 * and apply from their own bundle as well, hung before its first line.
 */
describe('a compile cache folder under /proc', () => {
  for (const args of [['--version'], ['apply', '--help'], ['validate', '--help']])
    it(`is unusable, and mpprov ${args.join(' ')} runs without it`, { timeout: 30_000 }, async () => {
      const { stdout, stderr } = await run(process.execPath, [join(repoRoot, 'dist/mpprov.cjs'), ...args], {
        env: { ...process.env, MPPROV_COMPILE_CACHE: '/proc/self/mpprov-cache', MPPROV_COMPILE_CACHE_DEBUG: '1' },
        encoding: 'utf8',
        // A hang is killed and fails the test rather than holding the run.
        timeout: 15_000,
        killSignal: 'SIGKILL',
      });
      expect(stderr).toMatch(/^mpprov: compile cache unusable$/m);
      expect(stdout).not.toBe('');
    });
});
