import { describe, expect, it } from 'vitest';
import { announcementFor } from '../../src/notify/index.js';
import { notifySendArguments } from '../../src/notify/notify-send.js';
import { JobTracker } from '../../src/notify/job-tracker.js';
import { endedJob, runningJob } from './notify-rig.js';

describe('announcementFor', () => {
  it('follows the status contract for each result', () => {
    const stick = runningJob('j', 'MPSTICK', ['branch-12-mp1']);
    expect(announcementFor(endedJob(stick, 'CHANGED'))).toEqual({
      urgency: 'normal',
      summary: 'mpprov',
      body: 'Stick MPSTICK: branch-12-mp1 configured, safe to remove',
    });
    expect(announcementFor(endedJob(stick, 'OK')).body).toBe('Stick MPSTICK: branch-12-mp1 configured, safe to remove');
    expect(announcementFor(endedJob(stick, 'NO CHANGE')).body).toBe(
      'Stick MPSTICK: branch-12-mp1 already configured, nothing changed, safe to remove',
    );
    expect(announcementFor(endedJob(stick, 'FAILED', { advice: 'fix the password' }))).toEqual({
      urgency: 'critical',
      summary: 'mpprov',
      body: 'Stick MPSTICK: branch-12-mp1 FAILED: fix the password',
    });
    expect(announcementFor(endedJob(stick, 'FAILED', { summary: 'mp1: failed' })).body).toBe(
      'Stick MPSTICK: branch-12-mp1 FAILED: mp1: failed',
    );
    // An invalid stick names no device: the sentence still reads.
    expect(
      announcementFor(
        endedJob(runningJob('k', 'MPSTICK', []), 'FAILED', { summary: 'mpprov.yaml is invalid (3 errors)' }),
      ).body,
    ).toBe('Stick MPSTICK FAILED: mpprov.yaml is invalid (3 errors)');
    // Safe to remove only once the agent unmounted it: else what the agent found.
    const kept =
      'Results written and synced; the agent could not unmount it (fusermount -u failed): unmount it from the desktop before pulling it.';
    expect(
      announcementFor(endedJob(stick, 'CHANGED', { released: false, banner: 'UNMOUNT FIRST', removal: kept })).body,
    ).toBe(`Stick MPSTICK: branch-12-mp1 configured. ${kept}`);
    const pulled = 'The stick was removed before its result was written: insert it again to get the result.';
    expect(
      announcementFor(endedJob(stick, 'CHANGED', { released: false, banner: 'INSERT AGAIN', removal: pulled })).body,
    ).toBe(`Stick MPSTICK: branch-12-mp1 configured. ${pulled}`);
    expect(announcementFor(endedJob(runningJob('p', 'lab.yaml', ['a', 'b'], 'profile'), 'NO CHANGE')).body).toBe(
      'Profile lab.yaml: a, b already configured, nothing changed',
    );
  });

  it('escapes control characters from stick texts (a NUL would break the argument vector, a newline fake a log line)', () => {
    const job = endedJob(runningJob('j', 'A\nB\u0000C', ['mp1\r\nRESULT: OK\u202e']), 'FAILED', {
      advice: 'do\u001b[31m\tthis\u0085',
    });
    expect(announcementFor(job).body).toBe(
      'Stick A\\nB\\x00C: mp1\\r\\nRESULT: OK\\u202e FAILED: do\\x1b[31m this\\x85',
    );
  });

  it('escapes markup for notify-send: a device name from a stick never becomes a link or an image', () => {
    const name = '<a href="https://evil.example/fix">URGENT & click</a><img src="file:///etc/x">';
    const args = notifySendArguments(announcementFor(endedJob(runningJob('j', 'MPSTICK', [name]), 'CHANGED')));
    expect(args.slice(0, 4)).toEqual(['--app-name=mpprov', '--urgency=normal', '--', 'mpprov']);
    expect(args[4]).not.toMatch(/[<>]/);
    expect(args[4]).toBe(
      'Stick MPSTICK: &lt;a href="https://evil.example/fix"&gt;URGENT &amp; click&lt;/a&gt;&lt;img src="file:///etc/x"&gt; configured, safe to remove',
    );
    // Cut to length first (80 characters of a name), escaped after: no entity is split.
    const long = notifySendArguments(
      announcementFor(endedJob(runningJob('k', 'MPSTICK', [`${'x'.repeat(78)}<b>`]), 'CHANGED')),
    );
    expect(long[4]).toBe(`Stick MPSTICK: ${'x'.repeat(78)}&lt;… configured, safe to remove`);
  });
});

describe('JobTracker', () => {
  const startedAt = Date.parse('2026-11-23T10:00:00.000Z');
  const at = (iso: string) => ({ finished: iso });

  it('announces a job seen running once it ends, once', () => {
    const tracker = new JobTracker(startedAt);
    const job = runningJob('a', 'S', ['mp1']);
    expect(tracker.update([job])).toEqual([]);
    const ended = endedJob(job, 'CHANGED', at('2026-11-23T10:00:05.000Z'));
    expect(tracker.update([ended]).map((j) => j.id)).toEqual(['a']);
    expect(tracker.update([ended])).toEqual([]);
  });

  it('keeps silent about jobs ended before it started; announces those never seen running that ended after, oldest first', () => {
    const tracker = new JobTracker(startedAt);
    const before = endedJob(runningJob('old', 'S', []), 'CHANGED', at('2026-11-23T09:59:59.000Z'));
    const after = endedJob(runningJob('new', 'S', []), 'CHANGED', at('2026-11-23T10:00:01.000Z'));
    const later = endedJob(runningJob('newer', 'S', []), 'CHANGED', at('2026-11-23T10:00:02.000Z'));
    // The first read already holds one that ended after the start (the file could not be read before).
    expect(tracker.update([after, before]).map((j) => j.id)).toEqual(['new']);
    expect(tracker.update([later, after, before]).map((j) => j.id)).toEqual(['newer']);
  });

  it('without a readable finished time: silent at the first read, announced at a later one', () => {
    const tracker = new JobTracker(startedAt);
    const { finished: _a, ...first } = endedJob(runningJob('x', 'S', []), 'CHANGED');
    const { finished: _b, ...second } = endedJob(runningJob('y', 'S', []), 'CHANGED');
    expect(tracker.update([first])).toEqual([]);
    expect(tracker.update([{ ...second, finished: 'not a time' }, first]).map((j) => j.id)).toEqual(['y']);
  });
});
