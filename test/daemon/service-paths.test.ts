import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { expectNoSecret, startService, TOKEN } from '../service/service-fixtures.js';
import { cliPath } from '../support/run-cli.js';
import { stickFiles } from '../support/stick-workspace.js';
import { allFiles, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { readFatFile } from './fat-stick.js';

/**
 * The agent with a service block and a stick that names paths, on a real FAT image: usb.log, the
 * result files at the stick's root, the status file and `mpprov status` all say the paths measure.
 */

let service: ServiceSimulator;
beforeAll(async () => {
  service = await startService({ reconnectMs: 300, pathDataMs: 400, pathSampleMs: 1000 });
});
afterAll(async () => service?.close());

describe('mpprov run with paths on a FAT stick', () => {
  const rig = useAgentRig();

  it(
    'creates the paths, waits until they measure, and says so everywhere a result goes',
    { timeout: 90_000 },
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
            `state_dir: ${w.stateDir}`,
            'log_level: debug',
            'timeouts: { request_s: 5, restart_s: 30 }',
            'service:',
            `  url: ${service.url}`,
            `  token_file: ${join(w.stateDir, '..', 'service.token')}`,
            `  tls: { ca: ${join(w.stateDir, '..', 'service-ca.pem')} }`,
            '  wait_connected_s: 15',
            '  wait_measuring_s: 20',
            '',
          ].join('\n'),
      });
      await writeFile(join(world.dir, 'service.token'), `${TOKEN}\n`, { mode: 0o600 });
      await writeFile(join(world.dir, 'service-ca.pem'), service.caPem);
      const agent = await rig.startAgent(world);
      const files = stickFiles([
        {
          name: 'mp1',
          sim,
          paths: [{ target: '192.0.2.80', location: 'Datacenter Frankfurt' }, { target: 'app.example.com' }],
        },
      ]);
      const { image, stick } = await rig.insertStick(world, 'MPSTICK', files);

      const [end] = await waitForJobEnds(world, 1, agent, 60_000);
      expect(end?.result, await agent.output()).toBe('CHANGED');
      await Promise.race([stick.exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      const summary = 'mp1: changed and verified, service: connected, 2/2 paths measuring';

      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      expect(usbLog).toContain(
        '[mp1] paths: making sure 2 path(s) exist and measure, for up to 20 s: 192.0.2.80, app.example.com',
      );
      expect(usbLog).toMatch(/\[mp1\] path to 192\.0\.2\.80: created, waiting for its first data/);
      expect(usbLog).toMatch(/\[mp1\] path to 192\.0\.2\.80: created, measuring/);
      expect(usbLog).toMatch(/\[mp1\] path to app\.example\.com: created, measuring/);
      expect(usbLog.trimEnd().split('\n').at(-1)).toBe(`RESULT: CHANGED  ${summary}  [${end?.id}]`);

      const okText = (await readFatFile(image, 'MPPROV-OK.TXT')) ?? '';
      expect(okText).toContain(`: ${summary}. Results written and synced.`);
      const document = JSON.parse((await readFatFile(image, 'mpprov-result.json')) ?? '{}') as {
        summary: string;
        devices: { service: { paths: { target: string; created: boolean; measuring: boolean }[] } }[];
      };
      expect(document.summary).toContain(summary);
      expect(document.devices[0]?.service.paths.map((p) => [p.target, p.created, p.measuring])).toEqual([
        ['192.0.2.80', true, true],
        ['app.example.com', true, true],
      ]);

      // The status file (the status page's and mpprov notify's source); its steps per path are
      // shown while the job runs (test/agent/job-board-paths.test.ts), the summary stays.
      const status = JSON.parse(await readFile(join(world.dir, 'run', 'status.json'), 'utf8')) as {
        jobs: { summary?: string }[];
      };
      expect(status.jobs[0]?.summary).toContain(summary);

      // mpprov status, from the state directory.
      const shown = await promisify(execFile)(process.execPath, [cliPath, 'status', '--state-dir', world.stateDir], {
        encoding: 'utf8',
      });
      expect(shown.stdout).toContain(summary);

      const stateFiles = [...(await allFiles(world.stateDir)).values()].map((b) => b.toString('utf8'));
      expectNoSecret(
        [
          usbLog,
          okText,
          JSON.stringify(document),
          JSON.stringify(status),
          shown.stdout,
          ...stateFiles,
          await agent.output(),
        ],
        [TOKEN],
      );
    },
  );
});
