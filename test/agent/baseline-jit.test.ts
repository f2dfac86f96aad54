import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/run-cli.js';

const run = promisify(execFile);

/**
 * A hot function in a node process, then V8's own word on its tier (%GetOptimizationStatus: bit 16
 * is "optimized"), with and without the agent's keepJitAtBaseline (the built dist/agent module, as
 * `mpprov run` calls it before its first job).
 */
async function optimizedAfterHotLoop(keepAtBaseline: boolean, hotForMs: number): Promise<boolean> {
  const module = join(repoRoot, 'dist/agent/baseline-jit.js');
  // Hot until V8 says it is optimized or the time is up: TurboFan compiles on a background thread,
  // which a loaded machine may run late, so the loop waits for that event, not for a fixed count.
  const script = [
    `import { keepJitAtBaseline } from ${JSON.stringify(module)};`,
    keepAtBaseline ? 'keepJitAtBaseline();' : '',
    'function mix(a, b) { return a * 31 + b; }',
    "const optimized = () => (new Function('f', 'return %GetOptimizationStatus(f)')(mix) & 16) !== 0;",
    `const until = Date.now() + ${hotForMs};`,
    'let x = 0;',
    'while (!optimized() && Date.now() < until) for (let i = 0; i < 1e6; i++) x = mix(x, i) | 0;',
    'console.log(optimized());',
  ].join('\n');
  const { stdout } = await run(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return stdout.trim() === 'true';
}

// The idle agent's memory: without the optimizing compiler it keeps about 4.5 MiB less.
describe("the agent's JIT", () => {
  it(
    'stays at the baseline tier once keepJitAtBaseline ran, where the same hot function is otherwise optimized',
    { timeout: 60_000 },
    async () => {
      expect(await optimizedAfterHotLoop(false, 30_000)).toBe(true);
      // Seconds of a hot loop: far more than TurboFan needs to pick a function up when it is on.
      expect(await optimizedAfterHotLoop(true, 3_000)).toBe(false);
    },
  );
});
