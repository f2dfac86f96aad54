import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AgentProcess, readJobs, waitFor, waitForJobEnds } from '../daemon/agent-process.js';
import { useAgentRig } from '../daemon/agent-rig.js';
import { runCli, startCli } from '../support/run-cli.js';
import { PEAP_PASSWORD, stateDir, stickWithConfig, stickYaml } from '../support/stick-workspace.js';

/** `mpprov run` with agent.yaml `secrets_record`: the agent uses the shared record and says once that it was made with another key. */
describe('the agent with a shared secrets record', () => {
  const rig = useAgentRig({ fatSticks: false });

  it(
    'takes secrets_record from agent.yaml (relative to it), warns once in the job log, and writes its own entry',
    { timeout: 90_000 },
    async () => {
      const sim = await rig.simulator({ restartMs: 200 });
      const world = await rig.makeWorld({
        agentYaml: (w) =>
          `version: 1\nmedia_roots: [${w.mediaRoot}]\nprofiles_dirs: [${w.profilesDir}]\nstate_dir: ${w.stateDir}\nsecrets_record: team/record.json\nlog_level: debug\ntimeouts: { request_s: 5, restart_s: 30 }\n`,
      });
      const record = join(world.dir, 'team', 'record.json');
      const yaml = stickYaml([{ name: 'mp1', sim, dot1x: true }]);

      // Another installation (its own state directory, so its own key) applied this device first.
      const stick = stickWithConfig(yaml);
      await writeFile(join(stick, '..', 'secrets', 'mp1.pw'), `${sim.password}\n`);
      const other = await runCli([
        'apply',
        stick,
        '--agent-config',
        '/nonexistent/agent.yaml',
        '--state-dir',
        stateDir(),
        '--secrets-record',
        record,
      ]);
      expect(other.stdout).toContain('RESULT: CHANGED');
      const otherId = (JSON.parse(await readFile(record, 'utf8')) as { devices: Record<string, { key_id: string }> })
        .devices[sim.url]?.key_id;
      expect(otherId).toMatch(/^[0-9a-f]{16}$/);

      const agent = await rig.startAgent(world);
      await mkdir(join(world.profilesDir, 'secrets'), { recursive: true });
      await writeFile(join(world.profilesDir, 'secrets', 'mp1.pw'), `${sim.password}\n`);
      await writeFile(join(world.profilesDir, '.site.yaml.tmp'), yaml);
      await rename(join(world.profilesDir, '.site.yaml.tmp'), join(world.profilesDir, 'site.yaml'));
      const [end] = await waitForJobEnds(world, 1, agent);
      expect(end?.result).toBe('CHANGED');
      const log = await readFile(join(world.stateDir, 'logs', `${end?.id}.log`), 'utf8');
      const warning = `warning: the secrets record ${record} was made with another key; every secret counts as changed`;
      expect(log.split('\n').filter((line) => line.includes(warning))).toHaveLength(1);
      const agentId = (JSON.parse(await readFile(record, 'utf8')) as { devices: Record<string, { key_id: string }> })
        .devices[sim.url]?.key_id;
      expect(agentId).toMatch(/^[0-9a-f]{16}$/);
      expect(agentId).not.toBe(otherId);
      expect((await readJobs(world.stateDir)).filter((r) => r.event === 'start')).toHaveLength(1);
      const everything = [log, await agent.output(), other.stdout, other.stderr, await readFile(record, 'utf8')].join(
        '\n',
      );
      expect(everything).not.toContain(PEAP_PASSWORD);
      expect(everything).not.toContain(sim.password);
    },
  );

  it(
    'mpprov run --secrets-record keeps the record there and the key in the state directory',
    { timeout: 60_000 },
    async () => {
      const sim = await rig.simulator({ restartMs: 200 });
      const world = await rig.makeWorld({
        agentYaml: (w) =>
          `version: 1\nmedia_roots: [${w.mediaRoot}]\nprofiles_dirs: [${w.profilesDir}]\nstate_dir: ${w.stateDir}\nlog_level: debug\ntimeouts: { request_s: 5, restart_s: 30 }\n`,
      });
      const record = join(world.dir, 'shared', 'record.json');
      const running = startCli(['run', '--agent-config', world.agentConfig, '--secrets-record', record], {
        env: { JOURNAL_STREAM: '', NOTIFY_SOCKET: '', RUNTIME_DIRECTORY: join(world.dir, 'run') },
      });
      const output = (): Promise<string> => Promise.resolve(running.output());
      const agent: AgentProcess = { child: running.child, exited: running.exited, output, stop: running.stop };
      try {
        await waitFor(
          () => running.output().includes('watching media roots'),
          15_000,
          'the agent to start',
          output,
          running.exited,
        );
        await mkdir(join(world.profilesDir, 'secrets'), { recursive: true });
        await writeFile(join(world.profilesDir, 'secrets', 'mp1.pw'), `${sim.password}\n`);
        await writeFile(join(world.profilesDir, '.site.yaml.tmp'), stickYaml([{ name: 'mp1', sim, dot1x: true }]));
        await rename(join(world.profilesDir, '.site.yaml.tmp'), join(world.profilesDir, 'site.yaml'));
        const [end] = await waitForJobEnds(world, 1, agent);
        expect(end?.result).toBe('CHANGED');
        expect(Object.keys((JSON.parse(await readFile(record, 'utf8')) as { devices: object }).devices)).toEqual([
          sim.url,
        ]);
        expect(existsSync(join(world.stateDir, 'secrets-record.json'))).toBe(false);
        expect(existsSync(join(world.stateDir, 'secrets-record.key'))).toBe(true);
      } finally {
        await running.stop('SIGKILL');
      }
    },
  );
});
