import { describe, expect, it } from 'vitest';
import { createJobBoard } from '../../src/agent/job-board.js';
import { Redactor } from '../../src/core/redact.js';

/** The status page and `mpprov status` show a step per path while a job makes sure its paths measure. */

describe('the job board with paths', () => {
  it('adds a step per path at the start and ends each as done or failed by whether it measures', () => {
    const b = createJobBoard({ redactor: new Redactor(), version: '0.1.0', hostname: 'laptop', pid: 42 });
    const id = 'j20261128-100000-ab12';
    b.start(id, {
      kind: 'stick',
      label: 'MPSTICK',
      location: '/media/tech/MPSTICK',
      config: 'mpprov.yaml',
      started: new Date('2026-11-28T10:00:00Z'),
      stage: 'applying',
    });
    b.event(id, { type: 'device-start', device: 'mp1', url: 'https://192.0.2.10' });
    b.event(id, {
      type: 'service-paths-start',
      device: 'mp1',
      hostname: 'mp1',
      targets: ['192.0.2.80', 'app.example.com'],
      waitS: 600,
    });
    let job = b.snapshot().jobs[0];
    expect(job?.devices[0]?.at).toBe('paths: do 2 path(s) exist and measure?');
    expect(job?.steps.map((s) => `${s.text} ${s.state}`)).toEqual([
      'path to 192.0.2.80 measures running',
      'path to app.example.com measures running',
    ]);
    b.event(id, {
      type: 'service-path',
      device: 'mp1',
      target: '192.0.2.80',
      id: 501,
      created: true,
      measuring: false,
      status: null,
      elapsedMs: 120,
      sentence: 'path to 192.0.2.80: created, waiting for its first data',
    });
    expect(b.snapshot().jobs[0]?.devices[0]?.at).toBe('path to 192.0.2.80: created, waiting for its first data');
    const path = (target: string, measuring: boolean) => ({
      target,
      id: 501,
      created: true,
      measuring,
      status: measuring ? 'SQA_NOT_VIOLATED' : 'INDETERMINATE',
      sentence: `path to ${target}: ${measuring ? 'created, measuring' : 'created, not measuring after 600 s'}`,
    });
    b.event(id, {
      type: 'service-paths-done',
      device: 'mp1',
      paths: [path('192.0.2.80', true), path('app.example.com', false)],
    });
    job = b.snapshot().jobs[0];
    expect(job?.steps.map((s) => `${s.text} ${s.state}`)).toEqual([
      'path to 192.0.2.80 measures done',
      'path to app.example.com measures failed',
    ]);
    expect(job?.devices[0]?.at).toBe('1/2 paths measuring');
  });
});
