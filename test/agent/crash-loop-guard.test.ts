import { describe, expect, it } from 'vitest';
import { createCrashLoopGuard, crashRefusal } from '../../src/agent/crash-loop-guard.js';
import type { InterruptedJob } from '../../src/agent/interrupted-jobs.js';

/** An interrupted job as recoverInterruptedJobs reports it: only the marker's source and stop count here. */
function interrupted(
  id: string,
  source: { kind: 'stick' | 'profile'; label: string; sha: string },
  stoppedBy?: string,
): InterruptedJob {
  return {
    id,
    reason: 'test',
    where: [],
    marker: {
      id,
      started: '2026-01-01T00:00:00.000Z',
      pid: 1,
      stage: 'applying',
      devices: {},
      source: {
        kind: source.kind,
        label: source.label,
        location: '/media/x',
        config: 'mpprov.yaml',
        config_sha256: source.sha,
      },
      ...(stoppedBy === undefined ? {} : { stoppedBy }),
    },
  };
}

describe('the crash-loop guard', () => {
  it('refuses a stick whose job ended the previous run without a signal: one such end is enough', () => {
    const guard = createCrashLoopGuard([interrupted('j1', { kind: 'stick', label: 'CRASHER', sha: 'aa' })]);
    expect(guard.crashedJob('CRASHER', 'aa')).toBe('j1');
  });

  it('runs a stick whose job was stopped by a signal, a profile, and the same stick with another configuration', () => {
    const guard = createCrashLoopGuard([
      interrupted('j1', { kind: 'stick', label: 'TERM', sha: 'aa' }, 'SIGTERM'),
      interrupted('j2', { kind: 'profile', label: 'p.yaml', sha: 'bb' }),
      interrupted('j3', { kind: 'stick', label: 'CRASHER', sha: 'cc' }),
    ]);
    expect(guard.crashedJob('TERM', 'aa')).toBeUndefined();
    expect(guard.crashedJob('p.yaml', 'bb')).toBeUndefined();
    expect(guard.crashedJob('CRASHER', 'changed')).toBeUndefined();
    expect(guard.crashedJob('OTHER', 'cc')).toBeUndefined();
    expect(guard.crashedJob('CRASHER', 'cc')).toBe('j3');
  });

  it('keeps refusing while the stick stays in; taken out from where it was refused, it runs again', () => {
    const guard = createCrashLoopGuard([interrupted('j1', { kind: 'stick', label: 'CRASHER', sha: 'aa' })]);
    guard.refused('/media/CRASHER', 'CRASHER', 'aa');
    // Another mount going away changes nothing.
    expect(guard.takenOut('/media/OTHER')).toBe(false);
    expect(guard.crashedJob('CRASHER', 'aa')).toBe('j1');
    expect(guard.takenOut('/media/CRASHER')).toBe(true);
    expect(guard.crashedJob('CRASHER', 'aa')).toBeUndefined();
    // Said once: the mark is gone.
    expect(guard.takenOut('/media/CRASHER')).toBe(false);
  });

  it('a stick never refused is not cleared by being taken out (it was never refused there)', () => {
    const guard = createCrashLoopGuard([interrupted('j1', { kind: 'stick', label: 'CRASHER', sha: 'aa' })]);
    expect(guard.takenOut('/media/CRASHER')).toBe(false);
    expect(guard.crashedJob('CRASHER', 'aa')).toBe('j1');
  });

  it('says why, what to check, and how to run it again', () => {
    expect(crashRefusal('j20260101-000000-abcd')).toBe(
      "this stick is not started: its job j20260101-000000-abcd ended the agent's previous run without finishing (crash, kill or power loss), " +
        'and starting it again could do the same on every restart while it stays inserted; check it with mpprov validate, ' +
        'then take it out and put it back to run it again, or change its configuration',
    );
  });
});
