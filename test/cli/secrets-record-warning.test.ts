import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stateDir, stickFromProfile } from '../support/stick-workspace.js';

/**
 * plan and apply say up front when the secrets record cannot be written: then every run resends
 * every secret and restarts the device's networking. A real read-only mount (tmpfs -o ro, as root)
 * and a state_dir under a file.
 */

const run = promisify(execFile);
const { start } = useSimulators(PROFILE_DEVICE);

describe('an unwritable secrets record', () => {
  let dir: string | undefined;
  let mounted: string | undefined;
  afterEach(async () => {
    if (mounted !== undefined) await run('umount', [mounted]).catch(() => undefined);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    dir = undefined;
    mounted = undefined;
  });

  it(
    'plan and apply on a read-only state directory warn (the check runs before the engine starts), and apply still works',
    { timeout: 60_000 },
    async () => {
      if (process.getuid?.() !== 0)
        throw new Error('this test mounts a read-only tmpfs: run it as root (the CI container is)');
      const device = await start();
      const file = stickFromProfile('peap-mschapv2.yaml', device.url);
      dir = await mkdtemp(join(tmpdir(), 'mpprov-ro-state-'));
      const state = join(dir, 'state');
      await mkdir(state);
      await run('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', state]);
      mounted = state;
      const warning = `WARNING: the secrets record cannot be created in ${state} (EROFS): every run sends the secrets again and restarts networking; give a writable --state-dir (or state_dir in agent.yaml), or run as the agent does (sudo)\n`;

      const plan = await runCli(['plan', file, '--agent-config', '/nonexistent/agent.yaml', '--state-dir', state]);
      expect(plan.code).toBe(2);
      expect(plan.stderr).toBe(warning);

      const apply = await runCli(['apply', file, '--agent-config', '/nonexistent/agent.yaml', '--state-dir', state]);
      expect(apply.stderr.startsWith(warning)).toBe(true);
      expect(apply.stdout).toContain('RESULT: CHANGED');
    },
  );

  it('a state_dir under a file: named, and no warning with a writable one', async () => {
    const device = await start();
    const file = stickFromProfile('peap-mschapv2.yaml', device.url);
    dir = await mkdtemp(join(tmpdir(), 'mpprov-file-state-'));
    await writeFile(join(dir, 'afile'), 'x');
    const plan = await runCli([
      'plan',
      file,
      '--agent-config',
      '/nonexistent/agent.yaml',
      '--state-dir',
      join(dir, 'afile', 'state'),
    ]);
    expect(plan.stderr).toContain(
      `WARNING: the secrets record cannot be created: ${join(dir, 'afile')} is not a directory: every run sends the secrets again`,
    );
    const fine = await runCli(['plan', file, '--agent-config', '/nonexistent/agent.yaml', '--state-dir', stateDir()]);
    expect(fine.code).toBe(2);
    expect(fine.stderr).toBe('');
  });
});
