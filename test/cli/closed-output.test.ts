import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliPath, repoRoot } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stateDir, stickFromProfile } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * `mpprov ... | head -1`, a terminal closed under a running apply: nobody reads stdout any more.
 * Every write then fails with EPIPE, which Node throws as an unhandled 'error' event unless
 * someone listens: a stack trace, and the end of the process wherever it was. Here the reader is
 * gone before the command's first line, so every write meets EPIPE.
 */
function runWithStdoutClosed(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    const stderr: Buffer[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr: Buffer.concat(stderr).toString('utf8') }));
  });
}

/**
 * The same with stdout on a terminal that was closed (a pseudo-terminal whose other side is gone,
 * as after an ssh session drops under `nohup` or under the agent, which takes SIGHUP as a reload):
 * there every write fails with EIO, not EPIPE. Node has no pseudo-terminals of its own: Python's
 * pty module makes one for the child.
 */
function runWithTerminalClosed(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const script = [
    'import os, pty, subprocess, sys',
    'master, slave = pty.openpty()',
    'os.close(master)',
    'code = subprocess.call(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=slave)',
    'sys.exit(code)',
  ].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', script, process.execPath, cliPath, ...args], {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const stderr: Buffer[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr: Buffer.concat(stderr).toString('utf8') }));
  });
}

const { start } = useSimulators(PROFILE_DEVICE);

describe('stdout closed by its reader', () => {
  it('validate goes on to its own status, 1 for a stick with problems, without a stack trace', async () => {
    const lines = ['version: 1', 'monitoring_points:'];
    for (let i = 0; i < 300; i++) lines.push(`  - name: mp${i}`, `    url: ftp://192.0.2.${(i % 250) + 1}`);
    const file = join(tempFolder('closed-output'), 'mpprov.yaml');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const result = await runWithStdoutClosed(['validate', file]);
    expect(result.stderr).not.toMatch(/EPIPE|Unhandled|\bat /);
    expect(result.code).toBe(1);
  });

  it('validate on a closed terminal (EIO) goes on to its own status too, without a stack trace', async () => {
    const result = await runWithTerminalClosed([
      'validate',
      join(repoRoot, 'test/fixtures/config/bad/username-colon.yaml'),
    ]);
    expect(result.stderr).not.toMatch(/EIO|Unhandled|\bat /);
    expect(result.code).toBe(1);
  });

  it('apply finishes the device, restart included, and exits 0', async () => {
    const device = await start();
    const file = stickFromProfile('peap-mschapv2.yaml', device.url);
    const result = await runWithStdoutClosed([
      'apply',
      file,
      '--agent-config',
      '/nonexistent/agent.yaml',
      '--state-dir',
      stateDir(),
    ]);
    expect(result.stderr).not.toMatch(/EPIPE|Unhandled|\bat /);
    expect(result.code).toBe(0);
    expect(device.state().restarts).toBe(1);
  });
});
