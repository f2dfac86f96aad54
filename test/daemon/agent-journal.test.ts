import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { waitFor } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';

describe('mpprov run under systemd', () => {
  const rig = useAgentRig({ fatSticks: false });

  it(
    'tells systemd it is ready, feeds the watchdog and says when it stops, through systemd-notify',
    { timeout: 30_000 },
    async () => {
      const w = await rig.makeWorld();
      // A stand-in systemd-notify first in PATH records what the agent asks systemd.
      const bin = join(w.dir, 'bin');
      const calls = join(w.dir, 'notify-calls');
      await mkdir(bin);
      await writeFile(join(bin, 'systemd-notify'), `#!/bin/sh\necho "$NOTIFY_SOCKET $*" >> ${calls}\n`);
      await chmod(join(bin, 'systemd-notify'), 0o755);
      const env = {
        PATH: `${bin}:${process.env.PATH ?? ''}`,
        NOTIFY_SOCKET: '/run/test-notify',
        WATCHDOG_USEC: '600000',
        JOURNAL_STREAM: '8:12345',
      };
      const running = await rig.startAgent(w, env);
      const pid = running.child.pid ?? 0;
      const read = async (): Promise<string> => readFile(calls, 'utf8').catch(() => '');
      await waitFor(
        async () => (await read()).split('\n').filter((l) => l.includes('WATCHDOG=1')).length >= 2,
        10_000,
        'two watchdog pings',
        running.output,
      );
      expect(await read()).toContain(`/run/test-notify --pid=${pid} --ready STATUS=watching for sticks`);
      expect(await read()).toContain(`/run/test-notify --pid=${pid} WATCHDOG=1`);
      expect((await running.stop('SIGTERM')).code).toBe(0);
      expect(await read()).toContain(`--pid=${pid} STOPPING=1 STATUS=stopping`);

      // journald: a syslog priority per line, no colours, no timestamps of our own.
      const lines = (await running.output()).trim().split('\n');
      expect(lines.length).toBeGreaterThan(2);
      // eslint-disable-next-line no-control-regex -- no escape byte (colour) on any line is the point
      for (const line of lines) expect(line).toMatch(/^<[3467]>[^\x1b]*$/);
      expect(lines[0]).toMatch(/^<6>mpprov \d+\.\d+\.\d+ starting: /);
    },
  );

  it('refuses to start with an invalid agent.yaml, naming each problem', async () => {
    const w = await rig.makeWorld({ agentYaml: () => 'version: 1\nmedia_root: [/media]\nlog_level: loud\n' });
    const { code, stderr: err } = await runCli(['run', '--agent-config', w.agentConfig]);
    expect(code).toBe(1);
    expect(err).toContain(`${w.agentConfig}:2:1  media_root  unknown key 'media_root'`);
    expect(err).toMatch(/:3:12 {2}log_level {2}/);
    expect(err).toContain(`${w.agentConfig}: INVALID, the agent does not start`);
  });
});
