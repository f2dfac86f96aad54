import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FINISHING, type FinishEnvironment, finishJob, jobHeader, RELEASING } from '../../src/agent/finish-job.js';
import { createJobBoard, type JobBoard } from '../../src/agent/job-board.js';
import { type JobMarker, openStateStore, type StateStore } from '../../src/agent/state-store.js';
import { Redactor } from '../../src/core/redact.js';
import { createAgentLogger } from '../../src/report/agent-logger.js';
import { concludeJob, createJobLog, createWriteQueues } from '../../src/report/index.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * The end of a job on a real stick folder, a real job log and a real state folder. The board
 * records what had happened by the time it was told the end: the order of the end is the point.
 */

async function rig(options: { eject: boolean; stage?: string }) {
  const dir = tempFolder('finish-job');
  const root = join(dir, 'STICK');
  await mkdir(root);
  await writeFile(join(root, 'mpprov.yaml'), 'version: 1\n');
  const redactor = new Redactor();
  const journal: string[] = [];
  const stream = new Writable({ write: (chunk: Buffer, _e, done) => void (journal.push(chunk.toString()), done()) });
  const logger = createAgentLogger({ level: 'debug', redactor, env: {}, stream });
  const state = await openStateStore(join(dir, 'state'), redactor);
  const id = 'j-end';
  const queues = createWriteQueues();
  const log = createJobLog({
    jobId: id,
    localFile: state.logFile(id),
    logger,
    redactor,
    stick: { root, device: (await stat(root)).dev, serialize: queues(root) },
  });
  const request = { kind: 'stick' as const, root, configName: 'mpprov.yaml', label: 'STICK' };
  const marker: JobMarker = {
    id,
    started: new Date().toISOString(),
    pid: process.pid,
    stage: options.stage ?? 'applying',
    devices: {},
    source: { kind: 'stick', label: 'STICK', location: root, config: 'mpprov.yaml', config_sha256: '' },
  };
  state.writeMarker(marker);
  const events: string[] = [];
  const real = createJobBoard({ redactor, version: '0.0.0', hostname: 'test' });
  real.start(id, {
    kind: 'stick',
    label: 'STICK',
    location: root,
    config: 'mpprov.yaml',
    started: new Date(),
    stage: 'x',
  });
  const history = (): Promise<string> => readFile(join(state.dir, 'jobs.jsonl'), 'utf8').catch(() => '');
  const board: JobBoard = {
    ...real,
    stage: (jobId, stage) => {
      events.push(`stage ${stage}`);
      real.stage(jobId, stage);
    },
    end: (jobId, end) => {
      events.push(`end ${end.result}`);
      real.end(jobId, end);
    },
  };
  const env: FinishEnvironment & { state: StateStore } = {
    agent: { whenDone: { eject: options.eject } },
    state,
    redactor,
    hostname: 'test',
    version: '0.0.0',
    stickQueue: queues,
    board,
    onSettled: () => events.push('settled'),
  };
  const job = { id, request, marker, log };
  const header = jobHeader(job, env, new Date(marker.started), '');
  return { root, state, log, job, env, header, events, journal, history, logger };
}

describe('the end of a job', () => {
  it('RESULT and result files, usb.log flushed, the stick released, settled, the board, then the history and the marker', async () => {
    const r = await rig({ eject: true });
    const conclusion = concludeJob({ failure: 'mpprov.yaml is invalid', configName: 'mpprov.yaml', stopped: false });
    let seenAtEnd = { usbLog: '', txt: false, history: '', marker: false };
    r.env.board = {
      ...(r.env.board as JobBoard),
      end: (id, end) => {
        r.events.push(`end ${end.result}`);
        seenAtEnd = {
          usbLog: readFileSync(join(r.root, 'usb.log'), 'utf8').trimEnd().split('\n').at(-1) ?? '',
          txt: existsSync(join(r.root, 'MPPROV-FAILED.TXT')),
          history: existsSync(join(r.state.dir, 'jobs.jsonl'))
            ? readFileSync(join(r.state.dir, 'jobs.jsonl'), 'utf8')
            : '',
          marker: existsSync(join(r.state.dir, 'running', `${id}.json`)),
        };
      },
    };
    const end = await finishJob(r.job, r.env, {
      kind: 'result',
      carriedNotes: [],
      conclusion,
      header: r.header,
      stopped: false,
    });
    expect(end).toEqual({ conclusion, stickLog: 'complete' });
    // Released only after the stick has everything, the board told only after the release.
    expect(r.events).toEqual([`stage ${FINISHING}`, `stage ${RELEASING}`, 'settled', 'end FAILED']);
    expect(seenAtEnd).toEqual({
      usbLog: 'RESULT: FAILED  mpprov.yaml is invalid  [j-end]',
      txt: true,
      history: '',
      marker: true,
    });
    const usbLog = await readFile(join(r.root, 'usb.log'), 'utf8');
    expect(usbLog.trimEnd().split('\n').at(-1)).toBe('RESULT: FAILED  mpprov.yaml is invalid  [j-end]');
    expect((await readdir(r.root)).sort()).toEqual([
      'MPPROV-FAILED.TXT',
      'mpprov-result.json',
      'mpprov.yaml',
      'usb.log',
    ]);
    const records = (await r.history())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.at(-1)).toMatchObject({
      event: 'end',
      id: 'j-end',
      result: 'FAILED',
      outcome: 'not-run',
      stick_log: 'complete',
    });
    expect(existsSync(join(r.state.dir, 'running', 'j-end.json'))).toBe(false);
    await r.logger.close();
  });

  it('a stick is not released when when_done.eject is off, and a stopped job keeps its marker, marked ended', async () => {
    const r = await rig({ eject: false });
    const conclusion = concludeJob({ failure: 'stopped', configName: 'mpprov.yaml', stopped: true });
    await finishJob(r.job, r.env, { kind: 'result', carriedNotes: [], conclusion, header: r.header, stopped: true });
    expect(r.events).toEqual([`stage ${FINISHING}`, 'settled', `end ${conclusion.word}`]);
    const kept = JSON.parse(await readFile(join(r.state.dir, 'running', 'j-end.json'), 'utf8')) as JobMarker;
    expect(kept.ended).toBe(true);
    await r.logger.close();
  });

  it('after an internal error once the RESULT was out: an ERROR line, not a second result; no release, no board; every step tried', async () => {
    const r = await rig({ eject: true, stage: FINISHING });
    const failing: StateStore = { ...r.state, appendHistory: () => Promise.reject(new Error('disk full (seam)')) };
    const tried: string[] = [];
    const summary = 'internal error in the job: boom';
    const end = await finishJob(
      r.job,
      { ...r.env, state: failing },
      {
        kind: 'internal-error',
        summary,
        step: async (what, step) => {
          tried.push(what);
          try {
            await step();
          } catch {
            tried.push(`${what} failed`);
          }
        },
        conclusion: concludeJob({ failure: summary, configName: 'mpprov.yaml', stopped: false }),
        header: r.header,
        stopped: false,
      },
    );
    expect(end.stickLog).toBe('complete');
    expect(tried).toEqual([
      'the usb.log line',
      'writing usb.log',
      'settling the job',
      'the history record',
      'the history record failed',
      'removing the running marker',
    ]);
    // The daemon abandons the banner itself; nothing was released.
    expect(r.events).toEqual(['settled']);
    const usbLog = await readFile(join(r.root, 'usb.log'), 'utf8');
    expect(usbLog).toContain(`${summary}; the result above stands, but the job's bookkeeping did not finish`);
    expect(usbLog).not.toContain('RESULT:');
    expect(existsSync(join(r.root, 'MPPROV-FAILED.TXT'))).toBe(false);
    expect(existsSync(join(r.state.dir, 'running', 'j-end.json'))).toBe(false);
    await r.logger.close();
  });
});
