import assert from 'node:assert';
import { spawn } from 'node:child_process';
import { constants as http2Constants } from 'node:http2';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { HTTP2_CONSTANTS_USED, standIns } from '../../packaging/lazy-builtins.mjs';
import { binEntry, repoRoot, type CliResult } from '../support/run-cli.js';
import { unreachablePlanStick } from './unreachable-plan-stick.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * Node's own modules a short command never uses are not loaded by the entry package.json names
 * (the bundle): node:http2 (undici's h2 client, which mpprov never allows), node:child_process
 * (commander's executable subcommands; mpprov's own children start only for a signature check,
 * a device lock or a preflight), node:readline (the agent's mount watcher). Each costs milliseconds
 * of every start. Read from process.moduleLoadList at exit, through a preloaded CommonJS file.
 */

const BUILTINS_AT_EXIT = [
  "process.on('exit', () => require('node:fs').writeFileSync(process.env.MPPROV_BUILTIN_LOG,",
  "  process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join('\\n')));",
].join('\n');

interface Run extends CliResult {
  builtins: string[];
}

async function builtinsOf(args: readonly string[], cwd = repoRoot): Promise<Run> {
  const folder = tempFolder('lazy-builtins');
  const preload = join(folder, 'builtins-at-exit.cjs');
  const log = join(folder, 'builtins.txt');
  await writeFile(preload, BUILTINS_AT_EXIT);
  // Its own spawn, not run-cli's: always the bundle (the stand-ins are the bundle's), and the
  // output read to its end ('close').
  const result = await new Promise<CliResult>((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', preload, join(repoRoot, binEntry), ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1', MPPROV_BUILTIN_LOG: log },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { ...result, builtins: (await readFile(log, 'utf8')).split('\n') };
}

describe("Node's modules a short command does not load", () => {
  it('validate: no child_process (the signature check loads it only to run ssh-keygen)', async () => {
    const run = await builtinsOf(['validate', 'profiles/peap-mschapv2.yaml']);
    expect(run).toMatchObject({ code: 0, stdout: 'profiles/peap-mschapv2.yaml: valid (0 errors, 0 warnings)\n' });
    // The list is real: what validate does load is in it.
    expect(run.builtins).toContain('fs');
    expect(run.builtins).toContain('crypto');
    expect(run.builtins).not.toContain('child_process');
    expect(run.builtins).not.toContain('http2');
  });

  it('plan: the device client and TLS, but no http2, child_process, readline, assert, nor DNS for a device addressed by IP', async () => {
    const { folder, config } = await unreachablePlanStick('lazy-builtins-plan');
    const run = await builtinsOf(['plan', config], folder);
    expect(run.code).toBe(1);
    expect(run.stderr + run.stdout).toMatch(/127\.0\.0\.1:1/);
    expect(run.builtins).toContain('tls');
    expect(run.builtins).toContain('http');
    for (const unused of ['http2', 'child_process', 'readline', 'dns/promises'])
      expect(run.builtins).not.toContain(unused);
  });

  it("the bundle's stand-in for node:http2 has undici's constants as Node has them, and connect is the real one", async () => {
    const http2 = standIns().find((s) => s.builtin === 'node:http2');
    expect(http2).toBeDefined();
    const exports: { constants?: Record<string, unknown>; connect?: unknown } = {};
    runInNewContext(http2?.contents ?? '', { exports, require: (id: string) => ({ connect: () => `real ${id}` }) });
    const expected = Object.fromEntries(
      HTTP2_CONSTANTS_USED.map((name) => [name, (http2Constants as Record<string, unknown>)[name]]),
    );
    expect(exports.constants).toEqual(expected);
    expect(Object.values(expected).every((value) => value !== undefined)).toBe(true);
    // undici destructures exactly these at load: one more in a newer undici would read undefined.
    const clientH2 = await readFile(join(repoRoot, 'node_modules/undici/lib/dispatcher/client-h2.js'), 'utf8');
    const destructured = /const \{\s*constants: \{([^}]*)\}\s*\} = http2/.exec(clientH2)?.[1];
    expect(
      destructured
        ?.split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ).toEqual(HTTP2_CONSTANTS_USED);
    expect(typeof exports.connect).toBe('function');
    expect((exports.connect as () => unknown)()).toBe('real node:http2');
  });

  it('the stand-ins hold everything their importers take from the real module: undici http2.connect, commander spawn', async () => {
    const used = async (file: string, name: string): Promise<string[]> => {
      const text = await readFile(join(repoRoot, 'node_modules', file), 'utf8');
      return [...new Set([...text.matchAll(new RegExp(`\\b${name}\\.(\\w+)`, 'g'))].map((m) => m[1] ?? ''))];
    };
    // One more member in a newer version would be undefined in the bundle only.
    expect(await used('undici/lib/dispatcher/client-h2.js', 'http2')).toEqual(['connect']);
    expect(await used('commander/lib/command.js', 'childProcess')).toEqual(['spawn']);
    const exports: Record<string, unknown> = {};
    const childProcess = standIns().find((s) => s.builtin === 'node:child_process');
    runInNewContext(childProcess?.contents ?? '', {
      exports,
      require: (id: string) => ({ spawn: () => `real ${id}` }),
    });
    expect((exports.spawn as () => unknown)()).toBe('real node:child_process');
  });

  it("undici's node:assert is a function it only calls, and the stand-in's failure is the real AssertionError", async () => {
    const { readdir } = await import('node:fs/promises');
    const lib = join(repoRoot, 'node_modules/undici/lib');
    const files = (await readdir(lib, { recursive: true })).filter((file) => file.endsWith('.js'));
    let importers = 0;
    for (const file of files) {
      const text = await readFile(join(lib, file), 'utf8');
      if (!text.includes("require('node:assert')")) continue;
      importers += 1;
      // Only `const assert = require('node:assert')`, then `assert(...)`: a member (assert.ok,
      // assert.strictEqual) in a newer undici would be undefined in the bundle.
      expect(text.match(/require\('node:assert'\)/g), file).toHaveLength(1);
      expect(text, file).toContain("const assert = require('node:assert')");
      expect(
        [...text.matchAll(/\bassert\b(?!\s*\(|'\))/g)].map((m) => text.slice(m.index, m.index + 30)),
        file,
      ).toEqual(["assert = require('node:assert'"]);
    }
    expect(importers).toBeGreaterThan(20);
    const standIn = standIns().find((s) => s.builtin === 'node:assert');
    const module: { exports?: unknown } = {};
    runInNewContext(standIn?.contents ?? '', {
      module,
      require: (id: string) => (id === 'node:assert' ? assert : undefined),
    });
    const check = module.exports as (value: unknown, message?: string) => void;
    expect(() => check(1, 'holds')).not.toThrow();
    expect(() => check(0, 'an invariant that does not hold')).toThrow(
      expect.objectContaining({ name: 'AssertionError', message: 'an invariant that does not hold' }),
    );
  });
});

describe("the bundle's stand-in for undici's node:assert, failing", () => {
  it('names the invariant that failed as the real assert would: the stack starts at the caller, not the stand-in', async () => {
    const folder = tempFolder('lazy-builtins-assert');
    const standIn = standIns().find((s) => s.builtin === 'node:assert');
    await writeFile(join(folder, 'stand-in.cjs'), standIn?.contents ?? '');
    await writeFile(
      join(folder, 'pool.cjs'),
      [
        "const assert = require('./stand-in.cjs');",
        'function release(kSize) {',
        '  assert(kSize === 0);',
        '}',
        'release(3);',
      ].join('\n'),
    );
    const { stderr, code } = await new Promise<{ stderr: string; code: number | null }>((resolve) => {
      const child = spawn(process.execPath, [join(folder, 'pool.cjs')], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      child.on('close', (exit) => resolve({ stderr: err, code: exit }));
    });
    expect(code).toBe(1);
    // Node names the throw's own line above the error (the real one: node:internal/assert/utils);
    // the error itself, its message and stack, names the invariant's line and nothing of the stand-in.
    const error = stderr.slice(stderr.indexOf('AssertionError [ERR_ASSERTION]'));
    expect(error).toMatch(/^AssertionError \[ERR_ASSERTION\]: false == true$/m);
    expect(/^\s+at .*$/m.exec(error)?.[0]).toContain(`${join(folder, 'pool.cjs')}:3:`);
    expect(error).not.toContain('stand-in.cjs');
    expect(error).not.toContain('require(');
  });
});
