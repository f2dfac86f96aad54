import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stateDir, stickWithConfig, type StickTarget } from '../support/stick-workspace.js';

/**
 * `--limit NAME[,NAME]` on plan and apply: two simulated devices in one file, and the request log
 * of each proves the one left out gets no request at all. The whole file is still validated, and
 * a name the file does not have is a usage error (64) before anything is sent.
 */
const { start } = useSimulators(PROFILE_DEVICE);
const engineArgs = (state: string) => ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', state];

function twoDevices(mp1: StickTarget, mp2: StickTarget, mp1Method = 'static'): string {
  const point = (name: string, device: StickTarget, address: string, method: string) => [
    `  - name: ${name}`,
    `    url: ${device.url}`,
    '    password_file: secrets/admin.pw',
    `    tls: { fingerprint_sha256: "${device.fingerprintSha256}" }`,
    '    interfaces:',
    '      eth1:',
    `        ipv4: { method: ${method}, address: ${address}/24, gateway: 192.0.2.1 }`,
  ];
  return `${['version: 1', 'monitoring_points:', ...point('mp1', mp1, '192.0.2.11', mp1Method), ...point('mp2', mp2, '192.0.2.12', 'static')].join('\n')}\n`;
}

function jsonLines(
  stdout: string,
): { type: string; device?: string; devices?: { device: string; outcome: string }[] }[] {
  const lines = stdout.trim().split('\n');
  expect(lines.length).toBeGreaterThan(1);
  return lines.map((l) => JSON.parse(l) as { type: string });
}

describe('--limit', () => {
  it('apply --limit mp2: mp1 gets no request at all, the result lists mp2 only', async () => {
    const [mp1, mp2] = [await start(), await start()];
    const file = stickWithConfig(twoDevices(mp1, mp2));
    const run = await runCli(['apply', file, '--json', '--limit', 'mp2', ...engineArgs(stateDir())]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = jsonLines(run.stdout);
    expect(lines.filter((l) => l.type === 'device-start').map((l) => l.device)).toEqual(['mp2']);
    expect(lines.at(-1)).toMatchObject({
      type: 'result',
      outcome: 'changed',
      devices: [{ device: 'mp2', outcome: 'changed' }],
    });
    expect(lines.at(-1)?.devices).toHaveLength(1);
    expect(mp1.requests()).toEqual([]);
    expect(mp2.requests().some((r) => r.method === 'POST')).toBe(true);

    // The text result line too; and mp1 is applied by a run limited to it alone.
    const text = await runCli(['apply', file, '--limit', 'mp1', ...engineArgs(stateDir())]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('RESULT: CHANGED (mp1 changed)');
    expect(mp1.requests().some((r) => r.method === 'POST')).toBe(true);
  });

  it('plan --limit: only the selected device is read and planned; names add up across commas and repeats', async () => {
    const [mp1, mp2] = [await start(), await start()];
    const file = stickWithConfig(twoDevices(mp1, mp2));
    const one = await runCli(['plan', file, '--limit', 'mp1', ...engineArgs(stateDir())]);
    expect(one.code).toBe(2);
    expect(one.stdout).toContain(`mp1 (${mp1.url}): `);
    expect(one.stdout).not.toContain(`mp2 (${mp2.url})`);
    expect(mp1.requests().length).toBeGreaterThan(0);
    expect(mp1.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    expect(mp2.requests()).toEqual([]);

    const both = await runCli([
      'plan',
      file,
      '--json',
      '--limit',
      'mp2,mp1',
      '--limit',
      'mp2',
      ...engineArgs(stateDir()),
    ]);
    expect(both.code).toBe(2);
    expect(
      jsonLines(both.stdout)
        .at(-1)
        ?.devices?.map((d) => d.device),
    ).toEqual(['mp1', 'mp2']);
  });

  it('a name the file does not have: one sentence naming it and the names there are, exit 64, nothing sent', async () => {
    const [mp1, mp2] = [await start(), await start()];
    const file = stickWithConfig(twoDevices(mp1, mp2));
    for (const command of ['plan', 'apply']) {
      const run = await runCli([command, file, '--limit', 'mp2,mp3', ...engineArgs(stateDir())]);
      expect(run.code).toBe(64);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(
        `error: --limit names 'mp3', which is not a monitoring point of ${file} (did you mean 'mp1'?); its monitoring points are 'mp1', 'mp2'`,
      );
    }
    // With --json the version line is already out; the sentence is still on stderr, the exit 64.
    const json = await runCli(['apply', file, '--json', '--limit', 'MP-2', ...engineArgs(stateDir())]);
    expect(json.code).toBe(64);
    expect(
      json.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { type: string }).type),
    ).toEqual(['version']);
    expect(json.stderr).toContain("--limit names 'MP-2', which is not a monitoring point");
    expect(mp1.requests()).toEqual([]);
    expect(mp2.requests()).toEqual([]);
  });

  it('an empty name is refused by the option parser: exit 64', async () => {
    const run = await runCli(['plan', 'mpprov.yaml', '--limit', 'mp1,']);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain("'mp1,' has an empty name");
    expect(run.stdout).toBe('');
  });

  it('the whole file is still validated: a problem in a device left out stops the run, nothing sent', async () => {
    const [mp1, mp2] = [await start(), await start()];
    const file = stickWithConfig(twoDevices(mp1, mp2, 'statik'));
    const run = await runCli(['apply', file, '--limit', 'mp2', ...engineArgs(stateDir())]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('monitoring_points[0].interfaces.eth1.ipv4.method');
    expect(run.stdout).toContain('INVALID, nothing was sent to any device');
    expect(mp1.requests()).toEqual([]);
    expect(mp2.requests()).toEqual([]);
  });
});
