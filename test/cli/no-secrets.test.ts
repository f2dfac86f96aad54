import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { useSimulator } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, profilesDir, stateDir, stickFromProfile } from '../support/stick-workspace.js';

/**
 * Every secret the profiles hold (secret files and inline values) is searched for in everything
 * mpprov writes: validate, plan and apply output in text and JSON, stderr, and the state folder.
 */
const secretFiles = readdirSync(join(profilesDir, 'secrets')).map((f) =>
  readFileSync(join(profilesDir, 'secrets', f), 'utf8').trim(),
);
const inline = readdirSync(profilesDir)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) =>
    [...readFileSync(join(profilesDir, f), 'utf8').matchAll(/(?:password|passphrase):\s*"([^"]+)"/g)].map(
      (m) => m[1] ?? '',
    ),
  );
const secrets = [...new Set([...secretFiles, ...inline])].filter((s) => s.length >= 8);

const { sim: device } = useSimulator(PROFILE_DEVICE);

describe('no secret in any output', () => {
  it('knows the secrets it is looking for', () => {
    expect(secrets).toEqual(
      expect.arrayContaining([
        'mpprov-demo-admin',
        'example-peap-password',
        'test-pfx-password',
        'example-md5-password',
        'example-wifi-passphrase',
      ]),
    );
  });

  for (const profile of readdirSync(profilesDir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    it(profile, async () => {
      const state = stateDir();
      const file = stickFromProfile(profile, device.url);
      const engine = ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', state];
      const runs = [
        await runCli(['validate', file]),
        await runCli(['validate', '--json', file]),
        await runCli(['plan', file, ...engine]),
        await runCli(['plan', '--json', file, ...engine]),
        await runCli(['apply', '--json', file, ...engine, '--discard-pending']),
        await runCli(['apply', file, ...engine]),
      ];
      const stateFiles = readdirSync(state, { recursive: true, encoding: 'utf8' })
        .map((f) => join(state, f))
        .filter((f) => statSync(f).isFile());
      const everything = [
        ...runs.flatMap((r) => [r.stdout, r.stderr]),
        ...stateFiles.map((f) => readFileSync(f, 'utf8')),
      ].join('\n');
      expect(runs.map((r) => r.code)).toEqual([0, 0, expect.any(Number), expect.any(Number), 0, 0]);
      for (const secret of secrets) expect(everything).not.toContain(secret);
    });
  }
});
