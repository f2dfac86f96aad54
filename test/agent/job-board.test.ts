import { describe, expect, it } from 'vitest';
import { endOnBoard, setStage } from '../../src/agent/board-feed.js';
import { createJobBoard, FINISHED_KEPT, MAX_DEVICES_SHOWN, SNAPSHOT_BYTE_BUDGET } from '../../src/agent/job-board.js';
import { AgentStatus } from '../../src/core/agent-status.js';
import { STATUS_FILE_CAP } from '../../src/notify/read-status-file.js';
import { Redactor } from '../../src/core/redact.js';
import { Secret } from '../../src/core/secret.js';

/** The board's banner rules (the status contract) and its redaction, with a real Redactor. */

const SECRET = 'Hunter2-Stick-Password';
const start = {
  kind: 'stick' as const,
  label: 'MPSTICK',
  location: '/media/tech/MPSTICK',
  config: 'mpprov.yaml',
  started: new Date('2026-11-23T10:00:00Z'),
  stage: 'reading the stick',
};

function board() {
  const redactor = new Redactor();
  const changes: boolean[] = [];
  const b = createJobBoard({ redactor, version: '0.1.0', hostname: 'laptop', pid: 42 });
  b.subscribe(({ ended }) => changes.push(ended));
  return { b, redactor, changes };
}

describe('the job board', () => {
  it('a stick job is WORKING through every stage and step, and SAFE TO REMOVE only once it ends', () => {
    const { b, changes } = board();
    const job = { id: 'j20261123-100000-ab12', marker: { stage: 'reading the stick' } };
    b.start(job.id, start);
    expect(b.snapshot().jobs.map((j) => j.banner)).toEqual(['WORKING']);
    b.expect(job.id, [{ name: 'mp1', url: 'https://192.0.2.10' }]);
    expect(b.snapshot().jobs[0]?.devices).toEqual([
      { name: 'mp1', url: 'https://192.0.2.10', state: 'waiting', at: 'waiting' },
    ]);
    setStage(job, b, 'applying');
    expect(job.marker.stage).toBe('applying');
    b.event(job.id, { type: 'device-start', device: 'mp1', url: 'https://192.0.2.10' });
    b.event(job.id, { type: 'step-start', device: 'mp1', index: 0, total: 2, description: 'upload ca_cert' });
    b.event(job.id, { type: 'step-done', device: 'mp1', index: 0, description: 'upload ca_cert', elapsedMs: 5 });
    b.event(job.id, { type: 'step-start', device: 'mp1', index: 1, total: 2, description: 'restart networking' });
    let snap = b.snapshot().jobs[0];
    expect(snap?.banner).toBe('WORKING');
    expect(snap?.stage).toBe('applying');
    expect(snap?.devices[0]).toMatchObject({ state: 'running', at: 'step 2/2 restart networking' });
    expect(snap?.steps.map((s) => `${s.text} ${s.state}`)).toEqual([
      'upload ca_cert done',
      'restart networking running',
    ]);
    b.event(job.id, { type: 'step-done', device: 'mp1', index: 1, description: 'restart networking', elapsedMs: 5 });
    // The device is done, the result is known: still WORKING until usb.log is synced and the stick released.
    b.event(job.id, {
      type: 'device-result',
      result: {
        device: 'mp1',
        url: 'https://192.0.2.10',
        outcome: 'changed',
        message: 'changed and verified',
        steps: [],
        warnings: [],
        durationMs: 10,
      },
    });
    setStage(job, b, 'finishing');
    setStage(job, b, 'releasing the stick');
    snap = b.snapshot().jobs[0];
    expect(snap?.banner).toBe('WORKING');
    expect(snap?.finished).toBeUndefined();
    expect(changes.every((ended) => !ended)).toBe(true);

    endOnBoard(job, b, {
      kind: 'stick',
      label: 'MPSTICK',
      configName: 'mpprov.yaml',
      conclusion: { word: 'CHANGED', summary: 'mp1: changed and verified' },
      finished: new Date(),
      localLog: '/var/lib/mpprov/logs/x.log',
      release: { kind: 'released', how: 'fusermount -u' },
    });
    snap = b.snapshot().jobs[0];
    expect(snap?.banner).toBe('SAFE TO REMOVE');
    expect(snap?.result).toBe('CHANGED');
    expect(snap?.released).toBe(true);
    expect(snap?.summary).toMatch(
      /^mpprov CHANGED at \d\d:\d\d \(stick MPSTICK, mpprov\.yaml, job j20261123-100000-ab12\): mp1: changed and verified\. Results written and synced; the agent unmounted the stick: it is safe to remove\.$/,
    );
    expect(snap?.advice).toBeUndefined();
    expect(changes.at(-1)).toBe(true);
  });

  it('a failed stick job is FAILED with the advice apart; a profile job is DONE; a job whose end never came is FAILED', () => {
    const { b } = board();
    b.start('j20261123-100000-0001', start);
    endOnBoard({ id: 'j20261123-100000-0001', marker: { stage: '' } }, b, {
      kind: 'stick',
      label: 'MPSTICK',
      configName: 'mpprov.yaml',
      conclusion: { word: 'FAILED', summary: 'mp1: failed (wrong password)' },
      finished: new Date(),
      localLog: '/l',
    });
    b.start('j20261123-100001-0002', {
      ...start,
      kind: 'profile',
      label: 'branch.yaml',
      started: new Date('2026-11-23T10:00:01Z'),
    });
    endOnBoard({ id: 'j20261123-100001-0002', marker: { stage: '' } }, b, {
      kind: 'profile',
      label: 'branch.yaml',
      configName: 'branch.yaml',
      conclusion: { word: 'NO CHANGE', summary: 'mp1: already applied' },
      finished: new Date(),
      localLog: '/l',
    });
    b.start('j20261123-100002-0003', { ...start, started: new Date('2026-11-23T10:00:02Z') });
    b.event('j20261123-100002-0003', {
      type: 'step-start',
      device: 'mp1',
      index: 0,
      total: 1,
      description: 'upload ca_cert',
    });
    b.abandon('j20261123-100002-0003', 'the job ended without a result');
    const jobs = b.snapshot().jobs;
    expect(jobs.map((j) => `${j.id} ${j.banner} ${j.result}`)).toEqual([
      'j20261123-100002-0003 FAILED FAILED',
      'j20261123-100001-0002 DONE NO CHANGE',
      'j20261123-100000-0001 FAILED FAILED',
    ]);
    expect(jobs[2]?.summary).toMatch(/\): mp1: failed \(wrong password\)\.$/);
    expect(jobs[2]?.advice).toMatch(
      /^What to do: read usb\.log on this stick \(its last section, job j20261123-100000-0001\)/,
    );
    expect(jobs[0]?.steps.map((s) => s.state)).toEqual(['failed']);
    // Abandoning an ended job changes nothing.
    b.abandon('j20261123-100001-0002', 'late');
    expect(b.snapshot().jobs[1]?.banner).toBe('DONE');
  });

  it('keeps the running jobs and the last 20 finished, newest first', () => {
    const { b } = board();
    const id = (n: number): string =>
      `j20261123-10${String(Math.floor(n / 60)).padStart(2, '0')}${String(n % 60).padStart(2, '0')}-${n.toString(16).padStart(4, '0')}`;
    for (let n = 0; n < 25; n++) {
      b.start(id(n), { ...start, started: new Date(Date.UTC(2026, 10, 23, 10, 0, n)) });
      if (n !== 3) b.end(id(n), { result: 'CHANGED', summary: 's', finished: new Date() });
    }
    const jobs = b.snapshot().jobs;
    expect(jobs.filter((j) => j.finished !== undefined)).toHaveLength(FINISHED_KEPT);
    expect(jobs.map((j) => j.id)).toContain(id(3));
    expect(jobs[0]?.id).toBe(id(24));
    expect(jobs.map((j) => j.id)).not.toContain(id(0));
  });

  it('redacts every text while the job secret is known, so none is left after the job forgets it', () => {
    const { b, redactor } = board();
    const forget = redactor.add([new Secret(SECRET)]);
    b.start('j20261123-100000-ab12', { ...start, label: `L${SECRET}` });
    b.event('j20261123-100000-ab12', {
      type: 'step-start',
      device: 'mp1',
      index: 0,
      total: 1,
      description: `set password ${SECRET}`,
    });
    b.event('j20261123-100000-ab12', {
      type: 'step-failed',
      device: 'mp1',
      index: 0,
      description: `set password ${SECRET}`,
      error: `refused ${SECRET}`,
      elapsedMs: 1,
    });
    forget();
    b.end('j20261123-100000-ab12', { result: 'FAILED', summary: 'mp1 failed', finished: new Date() });
    const text = JSON.stringify(b.snapshot());
    expect(text).toContain('set password (secret)');
    expect(text).toContain('failed: refused (secret)');
    expect(text.includes(SECRET)).toBe(false);
    expect(b.snapshot().agent).toMatchObject({ pid: 42, version: '0.1.0', hostname: 'laptop', stopped: false });
    b.stop();
    expect(b.snapshot().agent.stopped).toBe(true);
  });

  it('the worst a stick can make of it still fits the status file readers accept, and says what it left out', () => {
    const { b } = board();
    const long = 'x'.repeat(5000);
    // Twenty finished jobs and three running ones, each naming 1 000 devices with long names and 600 steps.
    for (let n = 0; n < FINISHED_KEPT + 3; n++) {
      const id = `j20261123-1000${String(n).padStart(2, '0')}-ab12`;
      b.start(id, {
        ...start,
        label: long,
        location: long,
        config: long,
        started: new Date(Date.UTC(2026, 10, 23, 10, 0, n)),
      });
      b.expect(
        id,
        Array.from({ length: 1000 }, (_, d) => ({ name: `mp${d}-${long}`, url: `https://192.0.2.1/${long}` })),
      );
      for (let step = 0; step < 600; step++) {
        b.event(id, {
          type: 'step-start',
          device: `mp${step % 1000}-${long}`,
          index: step,
          total: 600,
          description: `${long}${step}`,
        });
        if (step % 2 === 0)
          b.event(id, {
            type: 'step-failed',
            device: `mp${step % 1000}-${long}`,
            index: step,
            description: `${long}${step}`,
            error: long,
            elapsedMs: 1,
          });
      }
      if (n >= 3)
        b.end(id, {
          result: 'FAILED',
          summary: long,
          advice: long,
          finished: new Date(Date.UTC(2026, 10, 23, 11, 0, n)),
        });
    }
    const snapshot = b.snapshot();
    const text = JSON.stringify(snapshot);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(SNAPSHOT_BYTE_BUDGET);
    expect(SNAPSHOT_BYTE_BUDGET).toBeLessThan(STATUS_FILE_CAP);
    const parsed = AgentStatus.parse(JSON.parse(text));
    // Every running job is still there; finished ones went oldest first.
    expect(parsed.jobs.filter((j) => j.finished === undefined)).toHaveLength(3);
    expect(parsed.jobs.length).toBeGreaterThan(3);
    const running = parsed.jobs.find((j) => j.finished === undefined);
    expect(running?.devices.length).toBeLessThanOrEqual(MAX_DEVICES_SHOWN);
    expect((running?.devices.length ?? 0) + (running?.omittedDevices ?? 0)).toBe(1000);
    expect((running?.steps.length ?? 0) + (running?.omittedSteps ?? 0)).toBe(600);
    const finished = parsed.jobs.find((j) => j.finished !== undefined);
    expect(finished?.steps.every((s) => s.state === 'failed')).toBe(true);
    expect(finished?.omittedSteps ?? 0).toBeGreaterThan(0);
    expect(finished?.summary?.length).toBeLessThanOrEqual(2000);
  });

  it('a small board is left whole by the byte budget', () => {
    const { b } = board();
    b.start('j1', start);
    b.expect('j1', [{ name: 'mp1', url: 'https://192.0.2.10' }]);
    const snapshot = b.snapshot();
    expect(snapshot.jobs[0]?.omittedDevices).toBeUndefined();
    expect(snapshot.jobs[0]?.devices).toHaveLength(1);
  });
});
