import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runDaemon } from '../../src/agent/daemon.js';

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
type Listener = (signal: NodeJS.Signals) => void;
const listeners = (signal: NodeJS.Signals): Listener[] => process.rawListeners(signal) as Listener[];
const counts = (): number[] => SIGNALS.map((s) => process.listenerCount(s));

describe('runDaemon in one process, twice', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('leaves no signal listener behind after a stop by SIGTERM, then by SIGINT', { timeout: 30_000 }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-daemon-listeners-'));
    await mkdir(join(dir, 'media'));
    const agentConfigFile = join(dir, 'agent.yaml');
    await writeFile(
      agentConfigFile,
      `version: 1\nmedia_roots: [${join(dir, 'media')}]\nstate_dir: ${join(dir, 'state')}\nlog_level: error\n`,
    );
    const env = { ...process.env, JOURNAL_STREAM: '', NOTIFY_SOCKET: '', RUNTIME_DIRECTORY: join(dir, 'run') };
    const before = counts();
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const known = listeners(signal);
      const running = runDaemon({ agentConfigFile, env, version: 'test' });
      // The daemon's own handler, as the signal would call it (a once-wrapper removes itself).
      let handler: Listener | undefined;
      while (handler === undefined) {
        await new Promise((r) => setTimeout(r, 20));
        handler = listeners(signal).find((l) => !known.includes(l));
      }
      handler(signal);
      expect(await running).toBe(0);
      expect(counts()).toEqual(before);
    }
  });
});
