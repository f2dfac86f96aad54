import { execFile } from 'node:child_process';
import { lstat, mkdtemp, readFile, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/config/index.js';
import { repoRoot } from '../support/run-cli.js';

const run = promisify(execFile);
const unit = join(repoRoot, 'systemd/mpprov.service');

describe('systemd/mpprov.service', () => {
  it('passes systemd-analyze verify', async () => {
    const { stdout, stderr } = await run('systemd-analyze', ['verify', '--man=no', unit], { encoding: 'utf8' });
    expect(`${stdout}${stderr}`.trim()).toBe('');
  });

  it('has an exposure level of at most 3.0 in systemd-analyze security', async () => {
    const { stdout } = await run('systemd-analyze', ['security', '--offline=true', '--no-pager', unit], { encoding: 'utf8' });
    const match = /Overall exposure level for mpprov\.service: (\d+\.\d+)/.exec(stdout);
    expect(match, stdout).not.toBeNull();
    expect(Number(match?.[1])).toBeLessThanOrEqual(3.0);
  });

  it('is a notify service with a watchdog, restarted on failure, writing only its state dir and the media roots', async () => {
    const text = await readFile(unit, 'utf8');
    const settings = new Map<string, string[]>();
    for (const line of text.split('\n')) {
      const m = /^([A-Za-z]+)=(.*)$/.exec(line);
      if (m !== null) settings.set(m[1] ?? '', [...(settings.get(m[1] ?? '') ?? []), m[2] ?? '']);
    }
    const one = (key: string): string | undefined => settings.get(key)?.[0];
    expect(one('Type')).toBe('notify');
    expect(one('NotifyAccess')).toBe('all');
    expect(one('WatchdogSec')).toMatch(/^\d+s$/);
    expect(one('Restart')).toBe('on-failure');
    expect(one('ExecStart')).toMatch(/ run --agent-config \/etc\/mpprov\/agent\.yaml$/);
    expect(one('NoNewPrivileges')).toBe('yes');
    expect(one('ProtectSystem')).toBe('strict');
    expect(one('StateDirectory')).toBe('mpprov');
    // status.json for mpprov notify: readable by the desktop user.
    expect(one('RuntimeDirectory')).toBe('mpprov');
    expect(one('RuntimeDirectoryMode')).toBe('0755');
    expect(one('ReadWritePaths')).toBe('-/media -/run/media -/mnt');
    expect(one('ProtectHome')).toBe('yes');
    expect(one('PrivateTmp')).toBe('yes');
    expect(one('UMask')).toBe('0077');
    expect(one('RestrictAddressFamilies')).toBe('AF_UNIX AF_INET AF_INET6 AF_NETLINK');
    expect(one('SystemCallFilter')).toBe('@system-service');
    for (const key of ['ProtectKernelTunables', 'ProtectKernelModules', 'ProtectKernelLogs']) expect(one(key)).toBe('yes');
  });

  it('scripts/install.sh stages the build, the unit (verified) and the sample agent.yaml', { timeout: 60_000 }, async () => {
    const dest = await mkdtemp(join(tmpdir(), 'mpprov-install-'));
    try {
      await run(join(repoRoot, 'scripts/install.sh'), ['--dest-dir', dest, '--no-build'], { cwd: repoRoot, encoding: 'utf8' });
      const installed = join(dest, 'etc/systemd/system/mpprov.service');
      expect(await readFile(installed, 'utf8')).toMatch(/^ExecStart=\/\S*node \/usr\/local\/lib\/mpprov\/dist\/cli\/main\.js run /m);
      await run('systemd-analyze', ['verify', '--man=no', installed]);
      expect((await lstat(join(dest, 'usr/local/bin/mpprov'))).isSymbolicLink()).toBe(true);
      expect(await readlink(join(dest, 'usr/local/bin/mpprov'))).toBe('/usr/local/lib/mpprov/dist/cli/main.js');
      const { stdout } = await run(process.execPath, [join(dest, 'usr/local/lib/mpprov/dist/cli/main.js'), 'run', '--help'], { encoding: 'utf8' });
      expect(stdout).toContain('Usage: mpprov run');
      const sample = join(dest, 'etc/mpprov/agent.yaml');
      expect((await stat(sample)).mode & 0o777).toBe(0o600);
      const loaded = await loadAgentConfig(sample, {});
      expect(loaded.problems).toEqual([]);
      expect(loaded.config).toMatchObject({ mediaRoots: ['/media', '/run/media', '/mnt'], stateDir: '/var/lib/mpprov' });
      expect(loaded.config.statusPage?.listen).toMatchObject({ host: '127.0.0.1', port: 8471 });
    } finally {
      await rm(dest, { recursive: true, force: true });
    }
  });
});
