import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { flagsSetByOperator } from '../../src/core/v8-flags.js';
import { cliPath, repoRoot, startNode } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stateDir, stickFromProfile } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * The V8 flags mpprov sets for one step (src/core/v8-flags.ts) are put back so exactly that V8
 * takes Node's own code cache again, and the bundle's cache written at the exit of an `apply`
 * (which compiled undici's WebAssembly under other flags) is the one the next `apply` takes.
 * `--profile-deserialization` is V8's own account of each code cache it reads (and it is left
 * out of the flag hash), so these are the cache's verdicts, not timings.
 */

const run = promisify(execFile);
const flagsModule = pathToFileURL(join(repoRoot, 'dist/core/v8-flags.js')).href;

/** What V8 says about the code caches of Node's modules loaded after `steps` ran. */
async function builtinCacheVerdicts(steps: string): Promise<{ taken: number; refused: number }> {
  const script = [
    `const flags = await import(${JSON.stringify(flagsModule)});`,
    `const { setFlagsFromString } = await import('node:v8');`,
    steps,
    `console.log('--- loading');`,
    `await import('node:http2'); await import('node:dgram'); await import('node:repl');`,
  ].join('\n');
  const { stdout } = await run(process.execPath, ['--profile-deserialization', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  const after = stdout.slice(stdout.indexOf('--- loading'));
  return {
    taken: after.match(/^\[Deserializing from \d+ bytes/gm)?.length ?? 0,
    // Node 20's V8 says `[Cached code failed check]`, Node 22's and 24's add the reason (`: flags mismatch`).
    refused: after.match(/^\[Cached code failed check[\]:]/gm)?.length ?? 0,
  };
}

describe('V8 flags set for one step', () => {
  it("leave V8 taking Node's own code cache for the modules loaded afterwards", async () => {
    const untouched = await builtinCacheVerdicts('');
    expect(untouched.taken).toBeGreaterThan(10);
    expect(untouched.refused).toBe(0);

    const afterSteps = await builtinCacheVerdicts(
      'flags.withCodeCacheChecksum(() => 1); flags.withLlhttpAtBaseline(() => 1);',
    );
    expect(afterSteps).toEqual(untouched);

    // A step that throws (a connect callback, a damaged cache's compile) puts them back too.
    const afterThrows = await builtinCacheVerdicts(
      [
        "try { flags.withCodeCacheChecksum(() => { throw new Error('step'); }); } catch {}",
        "try { flags.withLlhttpAtBaseline(() => { throw new Error('step'); }); } catch {}",
      ].join('\n'),
    );
    expect(afterThrows).toEqual(untouched);

    // What the probe sees when a flag stays changed (as it did for the whole process before).
    const leftChanged = await builtinCacheVerdicts("setFlagsFromString('--liftoff-only');");
    expect(leftChanged.refused).toBeGreaterThan(10);
  });

  it("change nothing the operator set on node's command line or in NODE_OPTIONS", () => {
    const ours = ['--liftoff-only', '--no-wasm-tier-up'];
    expect(flagsSetByOperator(ours, ['--liftoff-only'], undefined)).toBe(true);
    expect(flagsSetByOperator(ours, [], '--max-old-space-size=100 --wasm_tier_up')).toBe(true);
    expect(flagsSetByOperator(ours, ['--no-liftoff-only'], '')).toBe(true);
    expect(flagsSetByOperator(ours, ['--trace-wasm-compilation-times', '--liftoff'], '--stack-trace-limit=50')).toBe(
      false,
    );
  });
});

describe('an apply (real HTTPS to the simulator)', () => {
  const { start } = useSimulators(PROFILE_DEVICE);

  /**
   * The WebAssembly compiles V8 traces during an apply. V8 prints them with C's stdio, which a
   * pipe buffers and the exit can lose: stdbuf makes it unbuffered.
   */
  async function compilesDuringApply(nodeFlags: string[]): Promise<string[]> {
    const device = await start();
    const file = stickFromProfile('peap-mschapv2.yaml', device.url);
    const args = ['apply', file, '--agent-config', '/nonexistent/agent.yaml', '--state-dir', stateDir()];
    const { stdout } = await run('stdbuf', ['-o0', process.execPath, ...nodeFlags, cliPath, ...args], {
      cwd: repoRoot,
      env: { ...process.env, MPPROV_COMPILE_CACHE: 'off', NO_COLOR: '1' },
      encoding: 'utf8',
    });
    expect(stdout).toContain('RESULT: CHANGED');
    return (stdout.match(/^Compiled function \S+ using \w+/gm) ?? []).map((line) => line.split(' ').pop()!);
  }

  it("compiles undici's HTTP parser at the baseline tier only: no optimizing compile for the exit to wait for", async () => {
    const tiers = await compilesDuringApply(['--trace-wasm-compilation-times']);
    expect(tiers).toContain('Liftoff');
    expect(tiers.filter((tier) => tier !== 'Liftoff')).toEqual([]);

    // A wasm flag on node's command line is the operator's: left alone, V8 tiers the parser up
    // as it does by default (which is what the step above prevents).
    const operators = await compilesDuringApply(['--trace-wasm-compilation-times', '--wasm-lazy-compilation']);
    expect(operators).toContain('TurboFan');
  });

  it("writes a code cache at its exit that the next apply takes (the flags were V8's defaults again)", async () => {
    const device = await start();
    const file = stickFromProfile('peap-mschapv2.yaml', device.url);
    const cache = join(tempFolder('v8-flags'), 'cache');
    const said: string[] = [];
    for (let i = 0; i < 2; i++) {
      const apply = startNode(
        [
          join(repoRoot, 'dist/mpprov.cjs'),
          'apply',
          file,
          '--agent-config',
          '/nonexistent/agent.yaml',
          '--state-dir',
          stateDir(),
        ],
        {
          env: { MPPROV_COMPILE_CACHE: cache, MPPROV_COMPILE_CACHE_DEBUG: '1', NO_COLOR: '1' },
        },
      );
      expect((await apply.exited).code).toBe(0);
      said.push(/^mpprov: compile cache (\w+)/m.exec(apply.stderr())?.[1] ?? apply.stderr());
    }
    expect(said).toEqual(['miss', 'hit']);
  });
});
