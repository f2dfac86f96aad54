import { realpathSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

const run = promisify(execFile);
const unit = join(repoRoot, 'systemd/mpprov-notify.service');

/** `KEY=value` lines of a unit file, every value of a key in order. */
async function settings(file: string): Promise<(key: string) => string[]> {
  const found = new Map<string, string[]>();
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m !== null) found.set(m[1] ?? '', [...(found.get(m[1] ?? '') ?? []), m[2] ?? '']);
  }
  return (key) => found.get(key) ?? [];
}

describe('systemd/mpprov-notify.service (a user unit)', () => {
  it('passes systemd-analyze verify, as a user unit and as a plain unit (what install.sh runs under sudo)', async () => {
    // A user manager's verify needs a runtime directory of its own; nothing else of a session.
    const runtime = tempFolder('xdg-runtime');
    const user = await run('systemd-analyze', ['--user', 'verify', '--man=no', unit], {
      encoding: 'utf8',
      env: { ...process.env, XDG_RUNTIME_DIR: runtime },
    });
    expect(`${user.stdout}${user.stderr}`.trim()).toBe('');
    const plain = await run('systemd-analyze', ['verify', '--man=no', unit], { encoding: 'utf8' });
    expect(`${plain.stdout}${plain.stderr}`.trim()).toBe('');
  });

  it('runs `mpprov notify` from the same place as mpprov.service, with the graphical session, restarted on failure', async () => {
    const notify = await settings(unit);
    const agent = await settings(join(repoRoot, 'systemd/mpprov.service'));
    const [agentStart] = agent('ExecStart');
    const mpprov = /^(\S+ \S+main\.js) run /.exec(agentStart ?? '')?.[1];
    expect(mpprov).toBe('/usr/bin/node /usr/local/lib/mpprov/dist/cli/main.js');
    expect(notify('ExecStart')).toEqual([`${mpprov} notify`]);
    expect(notify('PartOf')).toEqual(['graphical-session.target']);
    expect(notify('After')).toEqual(['graphical-session.target']);
    expect(notify('WantedBy')).toEqual(['graphical-session.target']);
    expect(notify('Restart')).toEqual(['on-failure']);
    // A user unit runs as the desktop user already: User= would make the user manager refuse it.
    expect(notify('User')).toEqual([]);
  });

  it(
    'scripts/install.sh stages it as /etc/systemd/user/mpprov-notify.service with this node and the prefix, verified',
    { timeout: 90_000 },
    async () => {
      const dest = await mkdtemp(join(tmpdir(), 'mpprov-install-'));
      try {
        const { stdout } = await run(
          join(repoRoot, 'scripts/install.sh'),
          ['--dest-dir', dest, '--no-build', '--prefix', '/opt/mp'],
          { cwd: repoRoot, encoding: 'utf8' },
        );
        expect(stdout).toContain('systemctl --user enable --now mpprov-notify');
        const installed = join(dest, 'etc/systemd/user/mpprov-notify.service');
        expect((await stat(installed)).mode & 0o777).toBe(0o644);
        const node = realpathSync((await run('sh', ['-c', 'command -v node'], { encoding: 'utf8' })).stdout.trim());
        expect((await settings(installed))('ExecStart')).toEqual([`${node} /opt/mp/lib/mpprov/mpprov.cjs notify`]);
        const verified = await run('systemd-analyze', ['verify', '--man=no', installed], { encoding: 'utf8' });
        expect(`${verified.stdout}${verified.stderr}`.trim()).toBe('');
        // The installed build answers to the command the unit runs.
        const help = await run(process.execPath, [join(dest, 'opt/mp/lib/mpprov/mpprov.cjs'), 'notify', '--help'], {
          encoding: 'utf8',
        });
        expect(help.stdout).toContain('Usage: mpprov notify');
      } finally {
        await rm(dest, { recursive: true, force: true });
      }
    },
  );
});
