import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentStatus, type StatusJob } from '../../src/core/agent-status.js';
import { announcementFor } from '../../src/notify/index.js';
import { cliPath, repoRoot } from '../support/run-cli.js';
import { stickFiles } from '../support/stick-workspace.js';
import { type AgentProcess, type AgentWorld, waitFor, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';

/**
 * Only true signals: SAFE TO REMOVE, the result file's words and the notification say "safe to
 * remove" only after the agent's unmount succeeded. The agent runs under the shipped unit's own
 * capability set (setpriv with its CapabilityBoundingSet and NoNewPrivileges), where the unmount of
 * a fusefat stick fails; and a stick pulled mid-job says it must go back in for its result.
 */

const unit = readFileSync(join(repoRoot, 'systemd/mpprov.service'), 'utf8');

/** setpriv's arguments for the unit's CapabilityBoundingSet= and NoNewPrivileges=. */
function unitPrivileges(): string[] {
  const bounding = /^CapabilityBoundingSet=(.*)$/m.exec(unit)?.[1]?.trim().split(/\s+/) ?? [];
  expect(bounding.length).toBeGreaterThan(0);
  const caps = bounding.map((cap) => `+${cap.replace(/^CAP_/, '').toLowerCase()}`);
  const nnp = /^NoNewPrivileges=yes$/m.test(unit) ? ['--nnp'] : [];
  return [...nnp, '--inh-caps', '-all', '--bounding-set', ['-all', ...caps].join(',')];
}

/** `mpprov run` for the world under setpriv, with the unit's capabilities; waits until it watches. */
async function startConfinedAgent(world: AgentWorld): Promise<AgentProcess> {
  const child = spawn(
    'setpriv',
    [...unitPrivileges(), process.execPath, cliPath, 'run', '--agent-config', world.agentConfig],
    {
      cwd: repoRoot,
      env: {
        ...process.env,
        NO_COLOR: '1',
        JOURNAL_STREAM: '',
        NOTIFY_SOCKET: '',
        RUNTIME_DIRECTORY: join(world.dir, 'run'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const output = (): Promise<string> => Promise.resolve(text);
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  await waitFor(
    async () => (await output()).includes('watching media roots'),
    15_000,
    'the agent to start',
    output,
    exited,
  );
  return { child, exited, output, stop };
}

async function endedJob(world: AgentWorld): Promise<StatusJob> {
  const status = AgentStatus.parse(JSON.parse(await readFile(join(world.dir, 'run', 'status.json'), 'utf8')));
  const job = status.jobs.find((j) => j.finished !== undefined);
  expect(job).toBeDefined();
  return job!;
}

describe('the signals say what is true about the stick', () => {
  const rig = useAgentRig();

  it(
    'under the unit\'s capabilities the unmount fails: no SAFE TO REMOVE, no "safe to remove", the stick stays mounted',
    { timeout: 60_000 },
    async () => {
      const sim = await rig.simulator({ restartMs: 300 });
      const world = await rig.makeWorld();
      const confined = await startConfinedAgent(world);
      try {
        const { stick, mountPoint } = await rig.insertStick(world, 'MPSTICK', stickFiles([{ name: 'mp1', sim }]));
        const [end] = await waitForJobEnds(world, 1, confined);
        expect(end?.result, await confined.output()).toBe('CHANGED');
        expect(await stick.mounted()).toBe(true);
        const output = await confined.output();
        expect(output).toMatch(/the stick at .* was not released: fusermount -u .* failed/);
        expect(output).not.toContain('safe to remove');

        const text = await readFile(join(mountPoint, 'MPPROV-OK.TXT'), 'utf8');
        expect(text).toMatch(
          /\. Results written and synced; the agent could not unmount it \(fusermount -u .* failed.*\): unmount it from the desktop before pulling it\.\r\n/,
        );
        expect(text).not.toContain('safe to remove');

        const job = await endedJob(world);
        expect(job.banner).toBe('UNMOUNT FIRST');
        expect(job.released).toBe(false);
        expect(job.summary).toContain('the agent could not unmount it');
        expect(job.removal).toMatch(/: unmount it from the desktop before pulling it\.$/);
        const note = announcementFor(job);
        expect(note.body).not.toContain('safe to remove');
        expect(note.body).toContain('unmount it from the desktop before pulling it');
      } finally {
        await confined.stop('SIGKILL');
      }
    },
  );

  it(
    'a stick pulled mid-job: never SAFE TO REMOVE, and the word is to insert it again to get the result',
    { timeout: 60_000 },
    async () => {
      const { sim, world, agent } = await rig.startWithDevice({ restartMs: 3000 });
      const { stick } = await rig.insertStick(world, 'PULLED', stickFiles([{ name: 'mp1', sim }]));
      await waitFor(
        async () => (await agent.output()).includes('step 3/4: restart networking'),
        20_000,
        'the restart step',
        agent.output,
      );
      await stick.pull();
      const [end] = await waitForJobEnds(world, 1, agent);
      expect(end?.stick_log).toBe('removed');
      const job = await endedJob(world);
      expect(job.banner).toBe('INSERT AGAIN');
      expect(job.released).toBe(false);
      const again = 'The stick was removed before its result was written: insert it again to get the result.';
      expect(job.removal).toBe(again);
      expect(job.summary).toContain(again);
      expect(announcementFor(job).body).toBe(`Stick PULLED: mp1 configured. ${again}`);
    },
  );
});
