import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { activeEth1 } from '../support/device-observations.js';
import { stickYaml } from '../support/stick-workspace.js';
import { readJobs, waitFor, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';

describe('mpprov run with a profiles folder', () => {
  const rig = useAgentRig({ fatSticks: false });

  it(
    'SIGHUP adds the folder; a profile dropped into it becomes a job, a broken one is reported',
    { timeout: 60_000 },
    async () => {
      const { sim, world: w, agent: running } = await rig.startWithDevice({ restartMs: 300 });
      await writeFile(
        w.agentConfig,
        `version: 1\nmedia_roots: [${w.mediaRoot}]\nprofiles_dirs: [${w.profilesDir}]\nstate_dir: ${w.stateDir}\nlog_level: debug\ntimeouts: { request_s: 5, restart_s: 30 }\n`,
      );
      running.child.kill('SIGHUP');
      await waitFor(
        async () => (await running.output()).includes(`SIGHUP: reloaded ${w.agentConfig}`),
        10_000,
        'the reload',
        running.output,
      );

      // As an editor or a copy would: the secret first, then the profile through a rename.
      await mkdir(join(w.profilesDir, 'secrets'), { recursive: true });
      await writeFile(join(w.profilesDir, 'secrets', 'mp1.pw'), `${sim.password}\n`);
      await writeFile(join(w.profilesDir, '.branch-12.yaml.tmp'), stickYaml([{ name: 'mp1', sim }]));
      await rename(join(w.profilesDir, '.branch-12.yaml.tmp'), join(w.profilesDir, 'branch-12.yaml'));
      const [end] = await waitForJobEnds(w, 1, running);
      expect(end).toMatchObject({ result: 'CHANGED', stick_log: 'none' });
      expect(activeEth1(sim)).toMatchObject({ method: 'static', address: '192.0.2.10' });
      const start = (await readJobs(w.stateDir)).find((r) => r.event === 'start');
      expect(start?.source).toMatchObject({ kind: 'profile', label: 'branch-12.yaml' });
      const local = await readFile(join(w.stateDir, 'logs', `${end?.id}.log`), 'utf8');
      expect(local).toContain(`profile: branch-12.yaml (${w.profilesDir})`);
      expect(local).toContain(`RESULT: CHANGED  mp1: changed and verified  [${end?.id}]`);

      // A broken profile: its problems, placed in the profile's own file, in the journal and local log.
      await writeFile(join(w.profilesDir, 'broken.yaml'), 'version: 1\nmonitoring_points: []\n');
      const ends = await waitForJobEnds(w, 2, running);
      expect(ends[1]?.result).toBe('FAILED');
      expect(await running.output()).toMatch(/problem: broken\.yaml:2:\d+ {2}monitoring_points {2}/);
      // Other files in the folder are not profiles.
      await writeFile(join(w.profilesDir, 'notes.txt'), 'not a profile\n');
      await new Promise((r) => setTimeout(r, 1000));
      expect((await readJobs(w.stateDir)).filter((r) => r.event === 'start')).toHaveLength(2);
    },
  );
});
