import { request } from 'node:http';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../daemon/agent-process.js';
import { useAgentRig } from '../daemon/agent-rig.js';

/**
 * The page and status.json across the agent's life, with the agent as a child process: started
 * when agent.yaml asks, moved on SIGHUP when status_page.listen changes, closed on stop, and
 * status.json marked stopped. No stick is needed for any of it.
 */

const statusOf = (host: string, port: number): Promise<number> =>
  new Promise((resolve) => {
    const req = request({ host, port, path: '/status.json' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(-1));
    req.end();
  });

const yaml = (mediaRoot: string, stateDir: string, listen?: string): string =>
  `version: 1\nmedia_roots: [${mediaRoot}]\nstate_dir: ${stateDir}\n${listen === undefined ? '' : `status_page: { listen: "${listen}" }\n`}`;

describe('the status page and status.json in the agent', () => {
  const rig = useAgentRig({ fatSticks: false });

  it(
    'serves at the logged address, moves on SIGHUP when listen changes, and closes on stop; status.json says stopped',
    { timeout: 60_000 },
    async () => {
      const world = await rig.makeWorld({
        agentYaml: ({ mediaRoot, stateDir }) => yaml(mediaRoot, stateDir, '127.0.0.1:0'),
      });
      const agent = await rig.startAgent(world);
      const first = /status page at http:\/\/127\.0\.0\.1:(\d+)\//.exec(await agent.output());
      expect(first, await agent.output()).not.toBeNull();
      const port = Number(first?.[1]);
      expect(await statusOf('127.0.0.1', port)).toBe(200);

      const statusFile = join(world.dir, 'run', 'status.json');
      await waitFor(
        async () => (await readFile(statusFile, 'utf8').catch(() => '')).includes('"format":1'),
        5000,
        'status.json',
      );
      const written = JSON.parse(await readFile(statusFile, 'utf8')) as {
        agent: { pid: number; stopped: boolean };
        jobs: unknown[];
      };
      expect(written.agent).toMatchObject({ pid: agent.child.pid, stopped: false });
      expect(written.jobs).toEqual([]);

      // The same address again: nothing moves. Another one: the old page closes, the new one listens.
      agent.child.kill('SIGHUP');
      await waitFor(
        async () => (await agent.output()).split('SIGHUP: reloaded').length === 2,
        10_000,
        'the first reload',
        () => agent.output(),
      );
      expect(await agent.output()).not.toContain('status page closed');
      await writeFile(world.agentConfig, yaml(world.mediaRoot, world.stateDir, '127.0.0.2:0'));
      agent.child.kill('SIGHUP');
      await waitFor(
        async () => /status page at http:\/\/127\.0\.0\.2:\d+\//.test(await agent.output()),
        10_000,
        'the page on its new address',
        () => agent.output(),
      );
      expect(await agent.output()).toContain('status page closed');
      const moved = Number(/status page at http:\/\/127\.0\.0\.2:(\d+)\//.exec(await agent.output())?.[1]);
      expect(await statusOf('127.0.0.2', moved)).toBe(200);
      expect(await statusOf('127.0.0.1', port)).toBe(-1);

      // Taken out of agent.yaml: the page closes.
      await writeFile(world.agentConfig, yaml(world.mediaRoot, world.stateDir));
      agent.child.kill('SIGHUP');
      await waitFor(
        async () => (await agent.output()).split('status page closed').length === 3,
        10_000,
        'the page to close',
        () => agent.output(),
      );
      expect(await statusOf('127.0.0.2', moved)).toBe(-1);

      expect((await agent.stop('SIGTERM')).code).toBe(0);
      const last = JSON.parse(await readFile(statusFile, 'utf8')) as { agent: { stopped: boolean } };
      expect(last.agent.stopped).toBe(true);
    },
  );

  it('a refused listen address stops the agent at start with the located problem', async () => {
    const world = await rig.makeWorld({
      agentYaml: ({ mediaRoot, stateDir }) => yaml(mediaRoot, stateDir, '0.0.0.0:8471'),
    });
    const { startCli } = await import('../support/run-cli.js');
    const run = startCli(['run', '--agent-config', world.agentConfig], {
      env: { JOURNAL_STREAM: '', NOTIFY_SOCKET: '', RUNTIME_DIRECTORY: join(world.dir, 'run') },
    });
    const exit = await run.exited;
    expect(exit.code).toBe(1);
    const output = run.output();
    expect(output).toContain('status_page.listen');
    expect(output).toContain(
      "'0.0.0.0' is not a loopback address: the status page is served on this laptop only and has no login",
    );
    expect(output).toContain('INVALID, the agent does not start');
  });

  it(
    'a port already taken is an error in the journal, and the agent goes on watching',
    { timeout: 30_000 },
    async () => {
      const { createServer } = await import('node:net');
      const blocker = createServer();
      await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
      const taken = (blocker.address() as { port: number }).port;
      try {
        const world = await rig.makeWorld({
          agentYaml: ({ mediaRoot, stateDir }) => yaml(mediaRoot, stateDir, `127.0.0.1:${taken}`),
        });
        const agent = await rig.startAgent(world);
        expect(await agent.output()).toContain(
          `cannot serve the status page at 127.0.0.1:${taken} (EADDRINUSE); the agent goes on without it`,
        );
      } finally {
        blocker.close();
      }
    },
  );
});
