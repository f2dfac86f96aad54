import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { binEntry, cliPath, repoRoot } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

const run = promisify(execFile);

interface PackageJson {
  bin: Record<string, string>;
  scripts: Record<string, string>;
  version: string;
}

const readJson = async <T>(file: string): Promise<T> => JSON.parse(await readFile(join(repoRoot, file), 'utf8')) as T;

/**
 * One fast entry for every way of running mpprov: `npx mpprov`, a source install and the tests run
 * the file package.json's `bin` names, so it must be the bundle's launcher (one file to compile,
 * from V8's code cache), never tsc's dist/cli/main.js (a few hundred modules resolved and compiled
 * on every start).
 */
describe("package.json's bin", () => {
  it('names the launcher of the bundle, in package.json and in the lock file alike', async () => {
    const manifest = await readJson<PackageJson>('package.json');
    expect(manifest.bin).toEqual({ mpprov: 'dist/mpprov.cjs' });
    const lock = await readJson<{ packages: Record<string, { bin?: Record<string, string> }> }>('package-lock.json');
    expect(lock.packages['']?.bin).toEqual(manifest.bin);
    expect(binEntry).toBe('dist/mpprov.cjs');
  });

  it('is what `npm run build` makes: tsc, then the bundle and its launcher', async () => {
    const { scripts } = await readJson<PackageJson>('package.json');
    expect(scripts.build).toBe('tsc -p tsconfig.build.json && node packaging/build-package.mjs --bundle-only');
    // Nothing a user runs goes around it to tsc's output.
    for (const name of ['demo', 'bench', 'schema', 'package']) expect(scripts[name], name).not.toMatch(/dist\/cli\//);
  });

  it('is the file the CLI tests run, and it runs the bundle with the code cache', async () => {
    expect(cliPath).toBe(join(repoRoot, binEntry));
    const { version } = await readJson<PackageJson>('package.json');
    const cache = tempFolder('bin-cache');
    const { stdout, stderr } = await run(process.execPath, [join(repoRoot, binEntry), '--version'], {
      env: { ...process.env, MPPROV_COMPILE_CACHE: cache, MPPROV_COMPILE_CACHE_DEBUG: '1' },
      encoding: 'utf8',
    });
    expect(stdout).toBe(`${version}\n`);
    // Only the launcher says what the cache did; tsc's main.js has no cache to speak of.
    expect(stderr).toBe(
      `mpprov: compile cache miss ${cache}/${/version@v[\d.]+-\w+-[0-9a-f-]+\.v8cache/.exec(stderr)?.[0]}\n`,
    );
  });
});
