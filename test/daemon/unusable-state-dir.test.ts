import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli } from '../support/run-cli.js';
import { makeWorld, startAgent, waitFor, type AgentProcess, type AgentWorld } from './agent-process.js';

// A folder the file system refuses with ENOENT although its parent exists: Node's recursive mkdir
// makes the parent again and retries there forever.
const UNMAKEABLE = '/proc/mpprov-test-no-such-folder';

describe('a state_dir under /proc', () => {
  let world: AgentWorld | undefined;
  let agent: AgentProcess | undefined;
  afterEach(async () => {
    await agent?.stop('SIGKILL');
    await world?.cleanup();
    world = undefined;
    agent = undefined;
  });

  it('at start-up: the agent refuses it in one sentence and exits 1', { timeout: 30_000 }, async () => {
    world = await makeWorld({
      agentYaml: (w) => `version: 1\nmedia_roots: [${w.mediaRoot}]\nstate_dir: ${UNMAKEABLE}\n`,
    });
    const run = startCli(['run', '--agent-config', world.agentConfig], {
      env: { JOURNAL_STREAM: '', NOTIFY_SOCKET: '', RUNTIME_DIRECTORY: join(world.dir, 'run') },
    });
    try {
      let exit: unknown;
      void run.exited.then((e) => (exit = e));
      await waitFor(
        () => exit !== undefined,
        15_000,
        'the agent to refuse the state folder',
        () => Promise.resolve(run.output()),
      );
      expect(exit).toEqual({ code: 1, signal: null });
      expect(run.output()).toContain(
        `the state folder ${UNMAKEABLE} cannot be locked: it cannot be made or read (ENOENT); the agent does not start`,
      );
    } finally {
      await run.stop('SIGKILL');
    }
  });

  it(
    'on SIGHUP: the reload is refused, and the next reload and the stop are not held up',
    { timeout: 30_000 },
    async () => {
      world = await makeWorld();
      agent = await startAgent(world);
      const good = `version: 1\nmedia_roots: [${world.mediaRoot}]\nstate_dir: ${world.stateDir}\nlog_level: debug\n`;
      await writeFile(world.agentConfig, good.replace(`state_dir: ${world.stateDir}`, `state_dir: ${UNMAKEABLE}`));
      agent.child.kill('SIGHUP');
      await waitFor(
        async () => (await agent?.output())?.includes(`SIGHUP: cannot use the state directory ${UNMAKEABLE}`) === true,
        15_000,
        'the reload refused',
        agent.output,
        agent.exited,
      );
      await writeFile(world.agentConfig, good.replace('log_level: debug', 'log_level: info'));
      agent.child.kill('SIGHUP');
      await waitFor(
        async () => (await agent?.output())?.includes('SIGHUP: reloaded') === true,
        15_000,
        'the next reload',
        agent.output,
        agent.exited,
      );
      expect(await agent.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    },
  );
});
