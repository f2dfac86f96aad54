import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import {
  chmod,
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
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
    const { stdout } = await run('systemd-analyze', ['security', '--offline=true', '--no-pager', unit], {
      encoding: 'utf8',
    });
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
    for (const key of ['ProtectKernelTunables', 'ProtectKernelModules', 'ProtectKernelLogs'])
      expect(one(key)).toBe('yes');
  });

  it("keeps V8's young generation small and its worker threads to one, and exposes gc, through NODE_OPTIONS, which this node accepts (memory the idle agent holds otherwise)", async () => {
    const text = await readFile(unit, 'utf8');
    const nodeOptions = /^Environment="?NODE_OPTIONS=([^"\n]*)"?$/m.exec(text)?.[1];
    expect(nodeOptions).toBeDefined();
    // A busy allocation, as a job's: without the cap the young generation grows to 16-32 MiB.
    // The threads: the main thread, V8's workers and Node's own (a bare node has 7 on 2 cores).
    const probe =
      "const v8=require('v8');let keep=[];for(let i=0;i<400;i++){keep.push(new Array(10000).fill({i}));if(keep.length>50)keep.shift();}" +
      "console.log(v8.getHeapSpaceStatistics().find((s)=>s.space_name==='new_space').space_size, require('fs').readdirSync('/proc/self/task').length, typeof gc)";
    const { stdout } = await run(process.execPath, ['-e', probe], {
      env: { ...process.env, NODE_OPTIONS: nodeOptions },
      encoding: 'utf8',
    });
    const [newSpace, threads, gc] = stdout.trim().split(' ');
    expect(Number(newSpace)).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(Number(threads)).toBeLessThanOrEqual(4);
    // The agent collects its jobs' garbage once idle (src/agent/idle-collect.ts) through gc.
    expect(gc).toBe('function');
  });

  it(
    'scripts/install.sh stages the bundle and its launcher (no node_modules), the unit (verified) and the sample agent.yaml',
    { timeout: 60_000 },
    async () => {
      const dest = await mkdtemp(join(tmpdir(), 'mpprov-install-'));
      try {
        await run(join(repoRoot, 'scripts/install.sh'), ['--dest-dir', dest, '--no-build'], {
          cwd: repoRoot,
          encoding: 'utf8',
        });
        const installed = join(dest, 'etc/systemd/system/mpprov.service');
        const node = realpathSync((await run('sh', ['-c', 'command -v node'], { encoding: 'utf8' })).stdout.trim());
        expect(await readFile(installed, 'utf8')).toMatch(
          new RegExp(`^ExecStart=${node} /usr/local/lib/mpprov/mpprov\\.cjs run `, 'm'),
        );
        await run('systemd-analyze', ['verify', '--man=no', installed]);
        expect((await lstat(join(dest, 'usr/local/bin/mpprov'))).isSymbolicLink()).toBe(true);
        expect(await readlink(join(dest, 'usr/local/bin/mpprov'))).toBe('/usr/local/lib/mpprov/mpprov.cjs');
        expect((await readdir(join(dest, 'usr/local/lib/mpprov'))).sort()).toEqual([
          'README.md',
          'mpprov-app.cjs',
          'mpprov-apply.cjs',
          'mpprov.cjs',
        ]);
        const bundle = join(dest, 'usr/local/lib/mpprov/mpprov.cjs');
        expect((await readFile(bundle, 'utf8')).split('\n')[0]).toBe(`#!${node}`);
        // Run as the command itself: its first line picks the node, nothing but its bundle beside it is needed.
        const { stdout } = await run(bundle, ['run', '--help'], { encoding: 'utf8' });
        expect(stdout).toContain('Usage: mpprov run');
        const apply = await run(bundle, ['apply', '--help'], { encoding: 'utf8' });
        expect(apply.stdout).toContain('Usage: mpprov apply');
        const sample = join(dest, 'etc/mpprov/agent.yaml');
        expect((await stat(sample)).mode & 0o777).toBe(0o600);
        const loaded = await loadAgentConfig(sample, {});
        expect(loaded.problems).toEqual([]);
        expect(loaded.config).toMatchObject({
          mediaRoots: ['/media', '/run/media', '/mnt'],
          stateDir: '/var/lib/mpprov',
        });
        expect(loaded.config.statusPage?.listen).toMatchObject({ host: '127.0.0.1', port: 8471 });
      } finally {
        await rm(dest, { recursive: true, force: true });
      }
    },
  );

  it('scripts/install.sh refuses a node under /home or /root, which ProtectHome=yes hides from the service', async () => {
    const home = await mkdtemp(join(tmpdir(), 'mpprov-install-'));
    try {
      // A node that does not exist is refused before anything is staged.
      await expect(
        run(join(repoRoot, 'scripts/install.sh'), ['--dest-dir', home, '--no-build', '--node', '/root/.nvm/node'], {
          cwd: repoRoot,
          encoding: 'utf8',
        }),
      ).rejects.toMatchObject({
        stderr: expect.stringMatching(/not an executable|ProtectHome=yes/) as string,
      });
      const fake = join(home, 'node');
      await writeFile(fake, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      await mkdir('/root/.mpprov-install-test', { recursive: true });
      const inRoot = '/root/.mpprov-install-test/node';
      await copyFile(fake, inRoot);
      await chmod(inRoot, 0o755);
      try {
        await expect(
          run(join(repoRoot, 'scripts/install.sh'), ['--dest-dir', home, '--no-build', '--node', inRoot], {
            cwd: repoRoot,
            encoding: 'utf8',
          }),
        ).rejects.toMatchObject({
          stderr: expect.stringContaining(
            `install.sh: ${inRoot} is under /home, /root or /run/user, which mpprov.service cannot see (ProtectHome=yes)`,
          ) as string,
        });
      } finally {
        await rm('/root/.mpprov-install-test', { recursive: true, force: true });
      }
      expect(existsSync(join(home, 'etc'))).toBe(false);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
