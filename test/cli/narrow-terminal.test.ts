import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { fitLine } from '../../src/report/progress-display.js';
import { cliPath, repoRoot } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stateDir, stickFromProfile } from '../support/stick-workspace.js';

/**
 * The live step list on a narrow terminal: `mpprov apply` in a real pty (util-linux `script`) of
 * 50 columns. Every line it draws is cut to the width, so a redraw never leaves wrapped rows behind.
 */

const run = promisify(execFile);
const { start } = useSimulators({ ...PROFILE_DEVICE, restartMs: 1500 });

describe('the live step list at 50 columns', () => {
  it('cuts each drawn line to the width, keeping the redraw intact', { timeout: 60_000 }, async () => {
    const device = await start();
    const file = stickFromProfile('peap-mschapv2.yaml', device.url);
    const command = `stty cols 50 rows 40; exec '${process.execPath}' '${cliPath}' apply '${file}' --agent-config /nonexistent/agent.yaml --state-dir '${stateDir()}'`;
    const { stdout } = await run('script', ['-qfec', command, '/dev/null'], {
      cwd: repoRoot,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', TERM: 'xterm' },
      maxBuffer: 16 * 1024 * 1024,
    });
    // Each redraw clears a row (ESC[2K) and writes one line: those are the rows of the step list.
    const rows = stdout
      .split('\x1b[2K')
      .slice(1)
      .map((chunk) => chunk.split(/\r?\n/)[0] ?? '');
    expect(rows.length).toBeGreaterThan(5);
    const tooWide = rows.filter((row) => [...row].length > 50);
    expect(tooWide).toEqual([]);
    // The step list had lines wider than that (the upload step names its files): they were cut.
    expect(rows.some((row) => row.endsWith('…'))).toBe(true);
    expect(rows.some((row) => row.includes('[x] restart networking'))).toBe(true);
    expect(stdout).toContain('CHANGED');
  });

  it('fitLine: short lines as they are, long ones cut with an ellipsis to the width', () => {
    expect(fitLine('abc', 50)).toBe('abc');
    expect(fitLine('x'.repeat(60), 50)).toBe(`${'x'.repeat(48)}…`);
    expect([...fitLine('x'.repeat(60), 50)].length).toBeLessThanOrEqual(50);
    expect(fitLine('x'.repeat(60), undefined)).toBe('x'.repeat(60));
  });
});
