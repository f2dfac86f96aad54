import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, repoRoot } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stateDir, stickFromProfile } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * The JSON-lines outputs start with the format's version line, so a provisioning script knows what
 * it reads before the first event: `plan --json` and `apply --json` (the service status's line is
 * in service-command.test.ts). Every line is JSON; the result stays the last line.
 */
const { start } = useSimulators(PROFILE_DEVICE);
const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const versionLine = { type: 'version', format: 1, mpprov: version };
const engineArgs = (state: string) => ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', state];

function jsonLines(stdout: string): Record<string, unknown>[] {
  const lines = stdout.trim().split('\n');
  expect(lines.length).toBeGreaterThan(1);
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the version line of --json', () => {
  it('plan --json and apply --json: the version line first, the result last', async () => {
    const device = await start();
    const file = stickFromProfile('dhcp.yaml', device.url);
    const state = stateDir();
    for (const command of ['plan', 'apply']) {
      const run = await runCli([command, file, '--json', ...engineArgs(state)]);
      expect(run.stderr).toBe('');
      const lines = jsonLines(run.stdout);
      expect(run.stdout.split('\n')[0]).toBe(JSON.stringify(versionLine));
      expect(lines.filter((l) => l['type'] === 'version')).toEqual([versionLine]);
      expect(lines.at(-1)).toMatchObject({ type: 'result', outcome: 'changed' });
    }
  });

  it('an invalid file or agent.yaml: still the version line first', async () => {
    const dir = tempFolder('json-version');
    const stick = join(dir, 'mpprov.yaml');
    writeFileSync(stick, 'version: 2\nmonitoring_points: []\n');
    const invalid = await runCli(['plan', stick, '--json', ...engineArgs(stateDir())]);
    expect(invalid.code).toBe(1);
    expect(jsonLines(invalid.stdout)[0]).toEqual(versionLine);
    const agent = join(dir, 'agent.yaml');
    writeFileSync(agent, 'concurrency: many\n');
    const badAgent = await runCli(['apply', stick, '--json', '--agent-config', agent, '--state-dir', stateDir()]);
    expect(badAgent.code).toBe(1);
    const lines = jsonLines(badAgent.stdout);
    expect(lines[0]).toEqual(versionLine);
    expect(lines[1]).toMatchObject({ type: 'problem', path: 'concurrency' });
  });
});
