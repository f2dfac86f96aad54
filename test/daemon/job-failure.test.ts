import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createDeviceLocks } from '../../src/agent/device-locks.js';
import { startJob } from '../../src/agent/run-job.js';
import { openStateStore, type StateStore } from '../../src/agent/state-store.js';
import { defaultAgentConfig } from '../../src/config/index.js';
import { Redactor } from '../../src/core/redact.js';
import { fileStickReader } from '../../src/ingest/index.js';
import { createAgentLogger } from '../../src/report/agent-logger.js';
import { createWriteQueues } from '../../src/report/index.js';
import { tempFolder } from '../support/temp-folder.js';
import { waitFor, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';

/**
 * An exception thrown inside a job outside the engine's own guard must end as that job's failure:
 * the history's end record, the running marker removed, the journal's error, and the agent alive
 * for the next stick. The real cause here: the state folder's notes folder replaced by a file while
 * the agent runs, and a read-only stick, so the text usb.log could not take must be kept as a
 * note, and keeping it throws (ENOTDIR) after the result, in settling the stick's log.
 */

describe('mpprov run: an exception inside a job', () => {
  const rig = useAgentRig();

  it(
    "is that job's failure: end record, no marker left, journal, and the agent takes the next stick",
    { timeout: 60_000 },
    async () => {
      const world = await rig.makeWorld();
      const agent = await rig.startAgent(world);
      await rm(join(world.stateDir, 'notes'), { recursive: true, force: true });
      await writeFile(join(world.stateDir, 'notes'), 'not a folder\n');

      await rig.insertStick(
        world,
        'BROKEN',
        { 'mpprov.yaml': 'version: 1\nmonitoring_points: []\n' },
        { readOnly: true },
      );
      const [end] = await waitForJobEnds(world, 1, agent);
      expect(end?.result, await agent.output()).toBe('FAILED');
      expect(end?.summary).toMatch(/^internal error in the job: .*ENOTDIR/);
      await waitFor(
        async () => (await readdir(join(world.stateDir, 'running'))).length === 0,
        5_000,
        'the running marker to go',
        agent.output,
      );
      // The journal arrives through a pipe: it may come after the end record is on disk.
      await waitFor(
        async () => /internal error: .*ENOTDIR/.test(await agent.output()),
        5_000,
        "the journal's internal error line",
        agent.output,
      );

      // Still alive and taking sticks: a second one (writable) gets its own RESULT on its usb.log.
      await rig.insertStick(world, 'NEXT', { 'mpprov.yaml': 'version: 1\nmonitoring_points: []\n' });
      const ends = await waitForJobEnds(world, 2, agent);
      expect(ends).toHaveLength(2);
      expect(ends[1]?.summary).toContain('mpprov.yaml is invalid');
      expect(ends[1]?.stick_log).toBe('complete');
      expect((await agent.stop()).code).toBe(0);
    },
  );
});

/**
 * Before the RESULT line, nothing real throws any more (every read of the state folder and the
 * stick is guarded), so this case is driven by a seam: a real state store whose notesFor throws.
 * It proves the catch-all writes what the stick is owed: RESULT FAILED, mpprov-result.json and
 * MPPROV-FAILED.TXT, with BUSY gone.
 */
describe('startJob: an exception before the result (seam: notesFor throws)', () => {
  it(
    'writes RESULT FAILED, the result files, the end record, and removes the marker',
    { timeout: 30_000 },
    async () => {
      const dir = tempFolder('job-failure');
      const root = join(dir, 'stick');
      await mkdir(root);
      await writeFile(join(root, 'mpprov.yaml'), 'version: 1\nmonitoring_points: []\n');
      const redactor = new Redactor();
      const output: string[] = [];
      const stream = new Writable({ write: (chunk: Buffer, _e, done) => void (output.push(chunk.toString()), done()) });
      const logger = createAgentLogger({ level: 'debug', redactor, env: {}, stream });
      const real = await openStateStore(join(dir, 'state'), redactor);
      const state: StateStore = {
        ...real,
        notesFor: () => Promise.reject(new Error('the notes could not be listed (seam)')),
      };
      const job = startJob(
        'j-seam',
        {
          kind: 'stick',
          root,
          configName: 'mpprov.yaml',
          label: 'SEAM',
          device: (await stat(root)).dev,
          configSha256: '',
        },
        {
          agent: { ...defaultAgentConfig(), stateDir: real.dir },
          state,
          logger,
          redactor,
          reader: fileStickReader,
          locks: createDeviceLocks(),
          signal: new AbortController().signal,
          stopReason: () => undefined,
          hostname: 'test',
          version: '0.0.0',
          stickQueue: createWriteQueues(),
        },
      );
      const end = await job.done;
      expect(end.conclusion).toEqual({
        word: 'FAILED',
        summary: 'internal error in the job: the notes could not be listed (seam)',
      });
      const usbLog = await readFile(join(root, 'usb.log'), 'utf8');
      expect(usbLog.trimEnd().split('\n').at(-1)).toBe(
        'RESULT: FAILED  internal error in the job: the notes could not be listed (seam)  [j-seam]',
      );
      expect(usbLog).not.toContain('the job is still running');
      const names = (await readdir(root)).sort();
      expect(names).toEqual(['MPPROV-FAILED.TXT', 'mpprov-result.json', 'mpprov.yaml', 'usb.log']);
      expect(JSON.parse(await readFile(join(root, 'mpprov-result.json'), 'utf8'))).toMatchObject({ result: 'FAILED' });
      expect(await readdir(join(real.dir, 'running'))).toEqual([]);
      const history = (await readFile(join(real.dir, 'jobs.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { event: string; result?: string });
      expect(history.map((h) => h.event)).toEqual(['start', 'end']);
      expect(history[1]?.result).toBe('FAILED');
      expect(output.join('')).toContain('internal error: Error: the notes could not be listed (seam)');
      await logger.close();
    },
  );
});
