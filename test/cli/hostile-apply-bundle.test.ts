import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BUILD_LINE_PREFIX } from '../../packaging/bundle.mjs';
import { buildOf } from '../../src/cli/bundle-build.js';
import { APPLY_APP, FULL_APP } from '../../src/cli/bundle-files.js';
import { repoRoot } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

const run = promisify(execFile);
const dist = join(repoRoot, 'dist');

/** A bundle that is not this build's: it says so, whatever it is asked. */
const STRAY = `${BUILD_LINE_PREFIX}0123456789abcdef\nprocess.stdout.write('stray bundle answered\\n');\n`;

async function answer(launcher: string, args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [launcher, ...args], {
    env: { ...process.env, MPPROV_COMPILE_CACHE: 'off', NO_COLOR: '1' },
    encoding: 'utf8',
  });
  return stdout;
}

/**
 * The launcher picks mpprov-apply.cjs for plan and apply: a hostile or careless install must not
 * get plan and apply answered by code of another build than every other command.
 */
describe('the plan and apply bundle of another build', () => {
  it('is stamped with one build in both bundles of a build', () => {
    const full = buildOf(join(dist, FULL_APP));
    expect(full).toMatch(/^[0-9a-f]{16}$/);
    expect(buildOf(join(dist, APPLY_APP))).toBe(full);
  });

  it('is not run beside a mpprov-app.cjs of another build: mpprov-app.cjs answers plan and apply', async () => {
    const folder = tempFolder('hostile-apply-bundle');
    for (const file of ['mpprov.cjs', FULL_APP]) copyFileSync(join(dist, file), join(folder, file));
    writeFileSync(join(folder, APPLY_APP), STRAY);
    const launcher = join(folder, 'mpprov.cjs');
    expect(await answer(launcher, ['apply', '--help'])).toContain('Usage: mpprov apply');
    expect(await answer(launcher, ['plan', '--version'])).toBe(`${await answer(launcher, ['--version'])}`);
    // One without a stamp (a bundle from before stamps) is another build as well.
    writeFileSync(join(folder, APPLY_APP), "process.stdout.write('stray bundle answered\\n');\n");
    expect(await answer(launcher, ['apply', '--help'])).toContain('Usage: mpprov apply');
  });

  it('is not taken from ../lib/mpprov/ when mpprov-app.cjs is beside the launcher', async () => {
    const folder = tempFolder('hostile-apply-bundle');
    mkdirSync(join(folder, 'bin'));
    mkdirSync(join(folder, 'lib', 'mpprov'), { recursive: true });
    for (const file of ['mpprov.cjs', FULL_APP]) copyFileSync(join(dist, file), join(folder, 'bin', file));
    // The same build's stamp, so only the folder tells it apart.
    const stamp = readFileSync(join(dist, APPLY_APP), 'latin1').split('\n', 1)[0] ?? '';
    writeFileSync(join(folder, 'lib', 'mpprov', APPLY_APP), `${stamp}\n${STRAY.split('\n')[1] ?? ''}\n`);
    expect(await answer(join(folder, 'bin', 'mpprov.cjs'), ['apply', '--help'])).toContain('Usage: mpprov apply');
  });

  it('of the same build, in the same folder, is what plan and apply run', async () => {
    const folder = tempFolder('hostile-apply-bundle');
    for (const file of ['mpprov.cjs', FULL_APP]) copyFileSync(join(dist, file), join(folder, file));
    const stamp = readFileSync(join(dist, APPLY_APP), 'latin1').split('\n', 1)[0] ?? '';
    writeFileSync(join(folder, APPLY_APP), `${stamp}\n${STRAY.split('\n')[1] ?? ''}\n`);
    expect(await answer(join(folder, 'mpprov.cjs'), ['apply', '--help'])).toBe('stray bundle answered\n');
  });
});

describe('a FIFO in the place of the plan and apply bundle', () => {
  it('is not waited on: mpprov-app.cjs answers plan and apply', { timeout: 30_000 }, async () => {
    const folder = tempFolder('hostile-apply-bundle');
    for (const file of ['mpprov.cjs', FULL_APP]) copyFileSync(join(dist, file), join(folder, file));
    await run('mkfifo', [join(folder, APPLY_APP)]);
    const { stdout } = await run(process.execPath, [join(folder, 'mpprov.cjs'), 'apply', '--help'], {
      env: { ...process.env, MPPROV_COMPILE_CACHE: 'off', NO_COLOR: '1' },
      encoding: 'utf8',
      timeout: 15_000,
      killSignal: 'SIGKILL',
    });
    expect(stdout).toContain('Usage: mpprov apply');
  });
});
