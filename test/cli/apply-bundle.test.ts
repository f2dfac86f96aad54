import { execFile } from 'node:child_process';
import { copyFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { APPLY_APP, APPLY_COMMANDS, FULL_APP } from '../../src/cli/bundle-files.js';
import { bundleIdentity } from '../../src/cli/compile-cache.js';
import { APP_FILES } from '../../packaging/bundle.mjs';
import { repoRoot } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

const run = promisify(execFile);
const dist = join(repoRoot, 'dist');

/** The bundle a command line ran, told by the code cache's name: the command, then node and the bundle file. */
async function bundleRunBy(launcher: string, args: string[]): Promise<{ cacheIdentity: string; stdout: string }> {
  const { stdout, stderr } = await run(process.execPath, [launcher, ...args], {
    env: {
      ...process.env,
      MPPROV_COMPILE_CACHE: join(tempFolder('apply-bundle'), 'cache'),
      MPPROV_COMPILE_CACHE_DEBUG: '1',
    },
    encoding: 'utf8',
  });
  const cacheIdentity = /compile cache \w+ \S+@([\w.-]+)\.v8cache/.exec(stderr)?.[1];
  if (cacheIdentity === undefined) throw new Error(`no compile cache line in ${JSON.stringify(stderr)}`);
  return { cacheIdentity, stdout };
}

/** compile-cache.ts's name for a bundle's cache, after the command. */
const identityOf = (file: string): string => bundleIdentity(statSync(file, { bigint: true }), readFileSync(file));

/**
 * `plan` and `apply` run from a bundle of their own (src/cli/apply-main.ts), without the code
 * of the other commands: less to read, hash, load from the code cache and evaluate at every start.
 */
describe('the plan and apply bundle', () => {
  it('is what the launcher runs for plan and apply, and mpprov-app.cjs for every other command line', async () => {
    const launcher = join(dist, 'mpprov.cjs');
    for (const command of APPLY_COMMANDS)
      expect((await bundleRunBy(launcher, [command, '--help'])).cacheIdentity, command).toBe(
        identityOf(join(dist, APPLY_APP)),
      );
    for (const args of [['validate', '--help'], ['--version'], ['--help'], ['schema']])
      expect((await bundleRunBy(launcher, args)).cacheIdentity, args.join(' ')).toBe(identityOf(join(dist, FULL_APP)));
  });

  it('holds no other command: a third smaller or more, the other commands unknown to it', () => {
    const full = readFileSync(join(dist, FULL_APP), 'latin1');
    const apply = readFileSync(join(dist, APPLY_APP), 'latin1');
    expect(apply.length).toBeLessThan(full.length * 0.7);
    for (const register of [
      'registerApplyCommands',
      'registerValidateCommand',
      'registerSimulateCommand',
      'registerRunCommand',
    ])
      expect(full, register).toContain(`function ${register}(`);
    expect(apply).toContain('function registerApplyCommands(');
    for (const register of [
      'registerValidateCommand',
      'registerSimulateCommand',
      'registerRunCommand',
      'registerStickCommands',
    ])
      expect(apply, register).not.toContain(`function ${register}(`);
  });

  it('answers plan and apply as the full CLI does: help, usage errors and their exit status', async () => {
    const answer = async (file: string, args: string[]) =>
      run(process.execPath, [join(dist, file), ...args], {
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1' },
      }).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code: number; stdout: string; stderr: string }) => ({
          code: error.code,
          stdout: error.stdout,
          stderr: error.stderr,
        }),
      );
    for (const args of [
      ['apply', '--help'],
      ['plan', '--help'],
      ['plan', '--no-such-flag', 'x'],
      ['apply'],
      ['apply', 'a', 'b'],
    ]) {
      const fromFull = await answer(FULL_APP, args);
      expect(await answer(APPLY_APP, args), args.join(' ')).toEqual(fromFull);
      expect(fromFull.stdout + fromFull.stderr, args.join(' ')).toMatch(/Usage: mpprov (plan|apply)/);
    }
  });

  it('is optional beside the launcher: without it plan and apply run from mpprov-app.cjs', async () => {
    const folder = tempFolder('apply-bundle');
    for (const file of ['mpprov.cjs', FULL_APP]) copyFileSync(join(dist, file), join(folder, file));
    const { cacheIdentity, stdout } = await bundleRunBy(join(folder, 'mpprov.cjs'), ['apply', '--help']);
    expect(cacheIdentity).toBe(identityOf(join(folder, FULL_APP)));
    expect(stdout).toContain('Usage: mpprov apply');
  });

  it('is built and packaged under the names the launcher looks for', () => {
    expect(Object.keys(APP_FILES).sort()).toEqual([FULL_APP, APPLY_APP].sort());
    expect(APP_FILES[APPLY_APP]).toBe('src/cli/apply-main.ts');
    expect(APP_FILES[FULL_APP]).toBe('src/cli/main.ts');
  });
});
