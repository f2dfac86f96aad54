import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliKind, cliPath, repoRoot, runCli } from '../support/run-cli.js';

/**
 * Which `mpprov` the CLI tests run: tsc's dist/cli/main.js in the main run, the one-file bundle
 * dist/mpprov.mjs when vitest.bundle.config.ts sets MPPROV_TEST_CLI=bundle. Both print the
 * package's version: the bundle has it inlined at build time, dist/ reads package.json.
 */
describe(`the CLI under test (${cliKind})`, () => {
  it('is the entry the run asked for, and prints the package version', async () => {
    expect(cliPath).toBe(join(repoRoot, cliKind === 'bundle' ? 'dist/mpprov.mjs' : 'dist/cli/main.js'));
    expect(cliKind).toBe(process.env.MPPROV_TEST_CLI === 'bundle' ? 'bundle' : 'dist');
    const { version } = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    const result = await runCli(['--version']);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('the bundle carries every dependency: it imports nothing but Node\'s own modules', async () => {
    const bundle = await readFile(join(repoRoot, 'dist/mpprov.mjs'), 'utf8').catch(() => {
      throw new Error('dist/mpprov.mjs is missing: run npm run package (or node packaging/build-package.mjs --bundle-only)');
    });
    expect(bundle.startsWith('#!/usr/bin/env node\n')).toBe(true);
    const imports = [...bundle.matchAll(/^import .* from ["']([^"']+)["'];?$/gm)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((name) => !name?.startsWith('node:'))).toEqual([]);
    // The inlined version is proven where no package.json is near: test/package runs the installed /usr/bin/mpprov.
  });

  it('the bundle is pure ASCII, so V8 holds its source at one byte a character (one curly quote in a comment doubles it)', async () => {
    const bundle = await readFile(join(repoRoot, 'dist/mpprov.mjs'));
    expect(bundle.length).toBeGreaterThan(1_000_000);
    const nonAscii = bundle.findIndex((byte) => byte > 0x7f);
    expect(nonAscii === -1 ? 'none' : bundle.subarray(Math.max(0, nonAscii - 60), nonAscii + 20).toString('utf8')).toBe('none');
  });
});
