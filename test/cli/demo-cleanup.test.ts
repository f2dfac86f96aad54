import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/run-cli.js';

/** `npm run demo` (scripts/demo.mjs over the built CLI) leaves nothing behind in the temp folder. */
describe('the demo', () => {
  let tmp: string | undefined;
  afterEach(async () => {
    if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
    tmp = undefined;
  });

  it('runs to its end and removes every folder it made', { timeout: 180_000 }, async () => {
    tmp = await mkdtemp(join(tmpdir(), 'mpprov-demo-tmp-'));
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp, NO_COLOR: '1' };
    delete env.MPPROV_DEMO_KEEP;
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [join(repoRoot, 'scripts/demo.mjs')], {
        cwd: repoRoot,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (c: Buffer) => (text += c.toString()));
      child.stderr.on('data', (c: Buffer) => (text += c.toString()));
      child.on('error', reject);
      child.on('close', (exitCode) => resolve({ code: exitCode, output: text }));
    });
    expect(code, output.slice(-3000)).toBe(0);
    expect(output).toContain('=== 8. The agent');
    // The stick's two paths: created by the first apply, then measuring.
    expect(output).toMatch(
      /path to 192\.0\.2\.80: created, waiting for its first data[^]*path to 192\.0\.2\.80: created, measuring/,
    );
    expect(output).toMatch(
      /path to app\.example\.com: created, waiting for its first data[^]*path to app\.example\.com: created, measuring/,
    );
    expect(output).toContain('RESULT: CHANGED (branch-12-mp1 changed, connected, 2/2 paths measuring)');
    expect(await readdir(tmp)).toEqual([]);
  });
});
