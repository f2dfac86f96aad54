import { chmod, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stickYaml } from '../support/stick-workspace.js';
import { waitFor } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';

/** Pids whose command line starts with `name`: a findmnt the agent started under that name. */
async function processesNamed(name: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(join('/proc', entry, 'cmdline'), 'utf8').catch(() => '');
    if (cmdline.startsWith(`${name}\0`)) found.push(Number(entry));
  }
  return found;
}

describe('signals while mpprov run stops', () => {
  const rig = useAgentRig({ fatSticks: false });

  it(
    'SIGHUP with SIGTERM: a reload under way or asked for during the stop leaves no watcher behind',
    { timeout: 60_000 },
    async () => {
      const world = await rig.makeWorld();
      const secondRoot = join(world.dir, 'media2');
      await mkdir(secondRoot);
      // findmnt under a name of this test's own, so what the agent leaves running can be found.
      const name = `mpprov-test-findmnt-${world.dir.slice(-6)}`;
      const findmnt = join(world.dir, 'findmnt');
      await writeFile(findmnt, `#!/bin/bash\nexec -a '${name}' findmnt "$@"\n`);
      await chmod(findmnt, 0o755);
      const agent = await rig.startAgent(world, { MPPROV_FINDMNT: findmnt });
      try {
        expect(await processesNamed(name)).toHaveLength(1);
        // A reload that would watch a second root, and the stop, at once (systemd's reload and stop).
        await writeFile(
          world.agentConfig,
          `version: 1\nmedia_roots: [${world.mediaRoot}, ${secondRoot}]\nstate_dir: ${world.stateDir}\nlog_level: debug\n`,
        );
        agent.child.kill('SIGHUP');
        agent.child.kill('SIGTERM');
        expect(await agent.exited).toEqual({ code: 0, signal: null });
        expect(await agent.output()).toContain('stopped');
        // The agent is gone; a findmnt it started is killed by its own watcher's close, never orphaned.
        await new Promise((r) => setTimeout(r, 300));
        expect(await processesNamed(name)).toEqual([]);
      } finally {
        for (const pid of await processesNamed(name)) process.kill(pid, 'SIGKILL');
      }
    },
  );

  it(
    'a second SIGTERM and a SIGHUP during the grace change nothing: the job ends its request, the agent says stopped',
    { timeout: 60_000 },
    async () => {
      // The first POST takes 3 s: both signals land while it is under way.
      const sim = await rig.simulator({ restartMs: 300, faults: ['latency=3s,times=1@POST /api/v1/interface/'] });
      const world = await rig.makeWorld({
        agentYaml: (w) =>
          `version: 1\nmedia_roots: [${w.mediaRoot}]\nprofiles_dirs: [${w.profilesDir}]\nstate_dir: ${w.stateDir}\nlog_level: debug\ntimeouts: { request_s: 10, restart_s: 30 }\n`,
      });
      const agent = await rig.startAgent(world);
      await mkdir(join(world.profilesDir, 'secrets'), { recursive: true });
      await writeFile(join(world.profilesDir, 'secrets', 'mp1.pw'), `${sim.password}\n`);
      await writeFile(join(world.profilesDir, '.p.yaml.tmp'), stickYaml([{ name: 'mp1', sim }]));
      await rename(join(world.profilesDir, '.p.yaml.tmp'), join(world.profilesDir, 'p.yaml'));
      await waitFor(
        async () => (await agent.output()).includes('step 1/4: POST eth1 inet (create)'),
        20_000,
        'the first step',
        agent.output,
        agent.exited,
      );

      agent.child.kill('SIGTERM');
      await waitFor(
        async () => (await agent.output()).includes('SIGTERM: stopping; 1 job(s)'),
        10_000,
        'the stop',
        agent.output,
        agent.exited,
      );
      agent.child.kill('SIGTERM');
      agent.child.kill('SIGHUP');
      expect(await agent.exited).toEqual({ code: 0, signal: null });
      const said = await agent.output();
      expect(said).toContain('SIGHUP: the agent is stopping; not reloaded');
      expect(said).not.toContain('SIGHUP: reloaded');
      expect(said.match(/: stopping; /g)).toHaveLength(1);
      expect(said.trimEnd().split('\n').at(-1)).toMatch(/ info {2}stopped$/);
      // The POST under way was answered; nothing after it was sent.
      expect(
        sim
          .requests()
          .filter((r) => r.method !== 'GET')
          .map((r) => `${r.method} ${r.path} ${r.status}`),
      ).toEqual(['POST /api/v1/interface/ 200']);
    },
  );
});
