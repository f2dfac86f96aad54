import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';
import { worldReadableCli } from '../support/world-readable-cli.js';

/**
 * `mpprov status --json` prints one JSON document whatever happens: the report, or an `error`
 * object with the sentence (exit 1), so a script never reads an empty stdout. The built CLI.
 */

const run = promisify(execFile);

interface StatusError {
  error: { kind: string; message: string; problems?: { line: number; path: string; message: string }[] };
}

describe('mpprov status --json when it cannot report', () => {
  it('an invalid agent.yaml: the error object with every problem, exit 1', async () => {
    const dir = tempFolder('status-json');
    const agentYaml = join(dir, 'agent.yaml');
    writeFileSync(agentYaml, 'log_level: verbose\nstatus_page: { listen: "0.0.0.0:8471" }\n');
    const result = await runCli(['status', '--json', '--agent-config', agentYaml]);
    expect(result.code).toBe(1);
    const document = JSON.parse(result.stdout) as StatusError;
    expect(document.error.kind).toBe('agent-config');
    expect(document.error.message).toBe(`the agent configuration ${agentYaml} has problems: 2 errors, 0 warnings`);
    expect(document.error.problems?.map((p) => `${p.line} ${p.path} ${p.message}`)).toEqual([
      '1 log_level "verbose" is not one of: error, warn, info, debug',
      "2 status_page.listen '0.0.0.0' is not a loopback address: the status page is served on this laptop only and has no login",
    ]);
    expect(result.stderr).toContain('log_level');
  });

  it('a missing state directory: the error object with the sentence, exit 1', async () => {
    const missing = join(tempFolder('status-json'), 'nowhere');
    const result = await runCli(['status', '--json', '--state-dir', missing]);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      error: {
        kind: 'state-dir',
        message: `the state directory ${missing} does not exist: the agent has not run with it yet, or agent.yaml's state_dir names another folder (give it with --state-dir)`,
      },
    });
  });

  it('no access to the state directory (as nobody): the error object with the sentence, exit 1', async () => {
    if (process.getuid?.() !== 0)
      throw new Error('this test drops from root to nobody with setpriv: run it as root (the CI container is)');
    const dir = tempFolder('status-json');
    chmodSync(dir, 0o755);
    const state = join(dir, 'state');
    mkdirSync(state, { mode: 0o700 });
    writeFileSync(join(state, 'jobs.jsonl'), '', { mode: 0o600 });
    const cli = worldReadableCli();
    const result = await run(
      'setpriv',
      [
        '--reuid=nobody',
        '--regid=nogroup',
        '--clear-groups',
        process.execPath,
        cli,
        'status',
        '--json',
        '--state-dir',
        state,
      ],
      { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', HOME: '/nonexistent' } },
    ).then(
      (ok) => ({ code: 0, stdout: ok.stdout }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code, stdout: error.stdout ?? '' }),
    );
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      error: {
        kind: 'state-dir',
        message: `cannot read ${state}: permission denied (the agent keeps its state readable by root only); run sudo mpprov status`,
      },
    });
  }, 30_000);

  it('with access: the report itself, exit 0', async () => {
    const state = tempFolder('status-json-state');
    writeFileSync(join(state, 'jobs.jsonl'), '');
    const result = await runCli(['status', '--json', '--state-dir', state]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).not.toHaveProperty('error');
  });
});
