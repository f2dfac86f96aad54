import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { binEntry, cliKind, cliPath, repoRoot, runCli } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

const run = promisify(execFile);

/**
 * Which `mpprov` the CLI tests run: the command package.json's `bin` names (the bundle's launcher
 * dist/mpprov.cjs and mpprov-app.cjs), or tsc's dist/cli/main.js with MPPROV_TEST_CLI=dist while
 * developing. Both print the package's version: the bundle has it inlined at build time, dist/
 * reads package.json.
 */
describe(`the CLI under test (${cliKind})`, () => {
  it('is the entry the run asked for, and prints the package version', async () => {
    expect(cliPath).toBe(join(repoRoot, cliKind === 'bundle' ? binEntry : 'dist/cli/main.js'));
    expect(cliKind).toBe(process.env.MPPROV_TEST_CLI === 'dist' ? 'dist' : 'bundle');
    const { version } = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    const result = await runCli(['--version']);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it("the bundle carries every dependency: launcher and bundle use nothing but Node's own modules", async () => {
    const missing = (file: string) => () => {
      throw new Error(`${file} is missing: run npm run package (or node packaging/build-package.mjs --bundle-only)`);
    };
    const launcher = await readFile(join(repoRoot, 'dist/mpprov.cjs'), 'utf8').catch(missing('dist/mpprov.cjs'));
    expect(launcher.startsWith('#!/usr/bin/env node\n')).toBe(true);
    // CommonJS (packaging/bundle.mjs): Node's ESM loader is not paid for at every start.
    expect(launcher).not.toMatch(/^import /m);
    const imports = new Set([...launcher.matchAll(/\brequire\(["']([^"']+)["']\)/g)].map((m) => m[1] ?? ''));
    expect(imports.size).toBeGreaterThan(0);
    expect([...imports].filter((name) => !name.startsWith('node:'))).toEqual([]);
    const app = await readFile(join(repoRoot, 'dist/mpprov-app.cjs'), 'utf8').catch(missing('dist/mpprov-app.cjs'));
    const required = new Set([...app.matchAll(/\brequire\(["']([^"']+)["']\)/g)].map((m) => m[1] ?? ''));
    expect(required.size).toBeGreaterThan(0);
    // node:sqlite is required lazily by undici's cache store, which mpprov never uses: Node 20 has no such module.
    expect([...required].filter((name) => !isBuiltin(name) && !name.startsWith('node:'))).toEqual([]);
    // The inlined version is proven where no package.json is near: test/package runs the installed /usr/bin/mpprov.
  });

  it('the bundle is pure ASCII, so V8 holds its source at one byte a character (one curly quote in a comment doubles it)', async () => {
    for (const file of ['dist/mpprov-app.cjs', 'dist/mpprov.cjs']) {
      const bytes = await readFile(join(repoRoot, file));
      const nonAscii = bytes.findIndex((byte) => byte > 0x7f);
      expect(
        nonAscii === -1 ? 'none' : bytes.subarray(Math.max(0, nonAscii - 60), nonAscii + 20).toString('utf8'),
        file,
      ).toBe('none');
    }
    expect((await readFile(join(repoRoot, 'dist/mpprov-app.cjs'))).length).toBeGreaterThan(1_000_000);
  });
});

describe('a short command ends when its work is done', () => {
  it('even with a handle still holding the event loop (a timer, a connection that never closes)', async () => {
    // A module loaded before mpprov that keeps the loop alive for a minute, as a lingering socket would.
    const holder = join(tempFolder('short-command-exit'), 'hold-loop.cjs');
    writeFileSync(holder, 'setTimeout(() => {}, 60_000);\n');
    const started = Date.now();
    const result = await runCli(['validate', join(repoRoot, 'profiles/peap-mschapv2.yaml')], {
      env: { NODE_OPTIONS: `--require ${holder}` },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('valid (0 errors');
    // Not a speed bound: the held loop would have kept it for the full minute.
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe('a short command ends with all its output out', () => {
  it('through a pipe, read at once or late, past its buffer (a hostile stick with thousands of problems)', async () => {
    const folder = tempFolder('short-command-pipe');
    const file = join(folder, 'mpprov.yaml');
    writeFileSync(
      file,
      ['version: 1', ...Array.from({ length: 3_000 }, (_, i) => `unknownkey${i}: ${i}`), ''].join('\n'),
    );
    // The whole output, into files (written synchronously): far more than a pipe holds (64 KiB).
    const [out, err] = [join(folder, 'out'), join(folder, 'err')];
    const mpprov = '"$0" "$1" validate "$2"';
    const sh = (script: string) => run('sh', ['-c', script, process.execPath, cliPath, file, out, err]);
    await sh(`${mpprov} >"$3" 2>"$4"; echo $? >>"$4"`);
    const whole = { stdout: readFileSync(out, 'utf8'), stderr: readFileSync(err, 'utf8') };
    expect(whole.stderr).toBe('1\n');
    expect(whole.stdout.length).toBeGreaterThan(200_000);
    // Through pipes: read at once (this test's own), and by a reader that starts a second late (`| (sleep 1; wc -c)`).
    const direct = await runCli(['validate', file]);
    expect(direct.code).toBe(1);
    expect(direct.stdout).toBe(whole.stdout);
    const counted = await sh(`${mpprov} 2>/dev/null | (sleep 1; wc -c); ${mpprov} 2>&1 >/dev/null | (sleep 1; wc -c)`);
    expect(counted.stdout.split(/\s+/).filter(Boolean).map(Number)).toEqual([Buffer.byteLength(whole.stdout), 0]);
  });
});
