import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createStopSwitch, STOP_GRACE_MS, type StopParts, stopJobs } from '../../src/agent/shutdown.js';
import { type JobMarker, openStateStore, readMarkers } from '../../src/agent/state-store.js';
import { Redactor } from '../../src/core/redact.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * The stop on a real state folder (markers on disk), with stand-in jobs the test ends when it
 * likes: what is under test is what a stop does to running jobs and how long it waits for them.
 */

function marker(id: string): JobMarker {
  return {
    id,
    started: new Date().toISOString(),
    pid: process.pid,
    stage: 'applying',
    devices: {},
    source: { kind: 'stick', label: 'S', location: '/media/S', config: 'mpprov.yaml', config_sha256: '' },
  };
}

function job(id: string) {
  let end = (): void => undefined;
  const done = new Promise<void>((resolve) => (end = resolve));
  return { marker: marker(id), done, end };
}

async function rig(jobs: Array<ReturnType<typeof job>>, parts: Partial<StopParts> = {}) {
  const state = await openStateStore(join(tempFolder('shutdown'), 'state'), new Redactor());
  const lines: string[] = [];
  const running = new Set(jobs);
  for (const j of jobs) {
    state.writeMarker(j.marker);
    void j.done.then(() => running.delete(j));
  }
  const stop = createStopSwitch();
  let announced = 0;
  const stopParts: StopParts = {
    stop,
    jobs: () => [...running],
    writeMarker: (m) => state.writeMarker(m),
    announce: () => void announced++,
    quiet: () => [],
    logger: { log: (level, message) => lines.push(`${level} ${message}`) },
    ...parts,
  };
  return { state, lines, stop, stopParts, announced: () => announced };
}

describe('stopping the agent', () => {
  afterEach(() => vi.useRealTimers());

  it('marks every running job as stopped by the signal on disk before the abort reaches them, then waits for them', async () => {
    const a = job('j-a');
    const b = job('j-b');
    const { state, lines, stop, stopParts, announced } = await rig([a, b]);
    // Read at the abort itself, synchronously: what a kill during the grace would leave behind.
    let onDiskAtAbort: JobMarker[] = [];
    stop.signal.addEventListener('abort', () => {
      const folder = join(state.dir, 'running');
      onDiskAtAbort = readdirSync(folder).map((f) => JSON.parse(readFileSync(join(folder, f), 'utf8')) as JobMarker);
    });
    const stopping = stopJobs('SIGTERM', stopParts);
    expect(stopping).toBeDefined();
    expect(stop.reason()).toBe('SIGTERM');
    expect(stop.signal.aborted).toBe(true);
    expect((stop.signal.reason as Error).message).toBe('stopped by SIGTERM');
    expect(announced()).toBe(1);
    expect(lines).toEqual([
      'info SIGTERM: stopping; 2 job(s) finish their request under way and start no networking restart',
    ]);
    let finished: boolean | undefined;
    void stopping?.then((f) => (finished = f));
    await new Promise((r) => setTimeout(r, 50));
    // Still waiting: the jobs have not ended.
    expect(finished).toBeUndefined();
    expect(onDiskAtAbort.map((m) => [m.id, m.stoppedBy]).sort()).toEqual([
      ['j-a', 'SIGTERM'],
      ['j-b', 'SIGTERM'],
    ]);
    a.end();
    b.end();
    expect(await stopping).toBe(true);
    expect(lines).toHaveLength(1);
  });

  it('a second signal changes nothing: the first one stops the agent', async () => {
    const a = job('j-a');
    const { lines, stop, stopParts } = await rig([a]);
    const first = stopJobs('SIGINT', stopParts);
    expect(stopJobs('SIGTERM', stopParts)).toBeUndefined();
    expect(stop.reason()).toBe('SIGINT');
    expect(a.marker.stoppedBy).toBe('SIGINT');
    a.end();
    expect(await first).toBe(true);
    expect(lines).toHaveLength(1);
  });

  it(`waits ${STOP_GRACE_MS / 1000} s for the jobs, then exits anyway, their markers written once more for the next start`, async () => {
    vi.useFakeTimers();
    const a = job('j-a');
    const { state, lines, stopParts } = await rig([a]);
    let finished: boolean | undefined;
    void stopJobs('SIGTERM', stopParts)?.then((f) => (finished = f));
    a.marker.devices.mp1 = { url: 'https://192.0.2.1', at: 'step 2/4', state: 'running' };
    await vi.advanceTimersByTimeAsync(STOP_GRACE_MS - 1);
    expect(finished).toBeUndefined();
    expect((await readMarkers(state.dir))[0]?.devices).toEqual({});
    await vi.advanceTimersByTimeAsync(1);
    expect(finished).toBe(false);
    expect(lines.at(-1)).toBe('error 1 job(s) did not finish within 9 s; exiting anyway (recorded for the next start)');
    expect((await readMarkers(state.dir))[0]).toMatchObject({
      stoppedBy: 'SIGTERM',
      devices: { mp1: { at: 'step 2/4' } },
    });
  });

  it('the grace starts once the watchers and a reload under way are quiet', async () => {
    const a = job('j-a');
    let quieted = (): void => undefined;
    const quiet = new Promise<void>((r) => (quieted = r));
    const { stopParts } = await rig([a], {
      quiet: () => [quiet, Promise.reject(new Error('a watcher failed to close'))],
      graceMs: 100,
    });
    const stopping = stopJobs('SIGTERM', stopParts);
    await new Promise((r) => setTimeout(r, 200));
    quieted();
    // 200 ms after the signal but within the grace counted from the quiet: the job counts as finished.
    await new Promise((r) => setTimeout(r, 20));
    a.end();
    expect(await stopping).toBe(true);
  });
});
