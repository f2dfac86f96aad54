import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { expectNoSecret, startService, TOKEN } from '../service/service-fixtures.js';
import { stickYaml } from '../support/stick-workspace.js';
import { allFiles, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';

/** The agent with a service block: the post-check in the job log and a `service:` note on its RESULT line. */

let service: ServiceSimulator;
beforeAll(async () => {
  service = await startService({ reconnectMs: 300 });
});
afterAll(async () => service?.close());

describe('mpprov run with the post-check', () => {
  const rig = useAgentRig({ fatSticks: false });

  it(
    'logs the check, keeps RESULT CHANGED with a service note, and writes the token nowhere',
    { timeout: 60_000 },
    async () => {
      service.registerAppliance({ hostname: 'mp1', orgId: 12 });
      const sim = await rig.simulator({
        restartMs: 300,
        hooks: {
          restartStarted: () => service.restartStarted('mp1'),
          answeringAgain: () => service.answeringAgain('mp1'),
        },
      });
      const world = await rig.makeWorld({
        agentYaml: (w) =>
          [
            'version: 1',
            `media_roots: [${w.mediaRoot}]`,
            `profiles_dirs: [${w.profilesDir}]`,
            `state_dir: ${w.stateDir}`,
            'log_level: debug',
            'timeouts: { request_s: 5, restart_s: 30 }',
            'service:',
            `  url: ${service.url}`,
            `  token_file: ${join(w.stateDir, '..', 'service.token')}`,
            `  tls: { ca: ${join(w.stateDir, '..', 'service-ca.pem')} }`,
            '  wait_connected_s: 15',
            '',
          ].join('\n'),
      });
      await writeFile(join(world.dir, 'service.token'), `${TOKEN}\n`, { mode: 0o600 });
      await writeFile(join(world.dir, 'service-ca.pem'), service.caPem);
      const agent = await rig.startAgent(world);
      await mkdir(join(world.profilesDir, 'secrets'), { recursive: true });
      await writeFile(join(world.profilesDir, 'secrets', 'mp1.pw'), `${sim.password}\n`);
      await writeFile(join(world.profilesDir, '.site.yaml.tmp'), stickYaml([{ name: 'mp1', sim }]));
      await rename(join(world.profilesDir, '.site.yaml.tmp'), join(world.profilesDir, 'site.yaml'));

      const [end] = await waitForJobEnds(world, 1, agent, 40_000);
      expect(end).toMatchObject({ result: 'CHANGED' });
      const local = await readFile(join(world.stateDir, 'logs', `${end?.id}.log`), 'utf8');
      expect(local).toContain(
        `[mp1] confirm the service sees it: asking ${service.url} about "mp1" for up to 15 s ...`,
      );
      expect(local).toMatch(/\[mp1\] service: connected to the service \(\d+\.\d s\)/);
      expect(local).toContain(`RESULT: CHANGED  mp1: changed and verified, service: connected  [${end?.id}]`);

      const files = [...(await allFiles(world.stateDir)).values()].map((b) => b.toString('utf8'));
      expectNoSecret([...files, await agent.output()], [TOKEN]);
    },
  );
});
