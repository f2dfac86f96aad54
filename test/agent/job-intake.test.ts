import { createHash } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCrashLoopGuard } from '../../src/agent/crash-loop-guard.js';
import { RELEASING } from '../../src/agent/finish-job.js';
import type { InterruptedJob } from '../../src/agent/interrupted-jobs.js';
import { type IntakeJob, type IntakeParts, JobIntake, type JobHooks, lookAtStick } from '../../src/agent/job-intake.js';
import type { JobRequest } from '../../src/agent/run-job.js';
import type { MountEntry } from '../../src/ingest/index.js';
import type { StickStatus } from '../../src/report/index.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * The intake on real folders and files (a stick is a folder with an mpprov.yaml), with the job
 * itself replaced by a stand-in the test ends when it likes: what is under test is which mount or
 * profile becomes a job, not the job.
 */

interface Started {
  id: string;
  request: JobRequest;
  hooks: JobHooks;
  job: IntakeJob & { marker: { stage: string } };
  end: () => void;
  stick: { status: StickStatus; reattached: number; detached: number };
}

function rig(parts: Partial<IntakeParts> = {}) {
  const lines: string[] = [];
  const started: Started[] = [];
  const events: string[] = [];
  let n = 0;
  let stopping = false;
  const intake = new JobIntake({
    logger: { log: (level, message, job) => lines.push(`${level}${job === undefined ? '' : ` [${job}]`} ${message}`) },
    crashLoop: createCrashLoopGuard([]),
    nextJobId: () => `j${++n}`,
    stopping: () => stopping,
    start: (id, request, hooks) => {
      let end = (): void => undefined;
      const done = new Promise<void>((resolve) => (end = resolve));
      const stick = { status: { ok: true } as StickStatus, reattached: 0, detached: 0 };
      const job = {
        id,
        request,
        done,
        marker: {
          id,
          started: new Date().toISOString(),
          pid: process.pid,
          stage: 'applying',
          devices: {},
          source: { kind: request.kind, label: request.label, location: request.root, config: '', config_sha256: '' },
        },
        log: {
          stick:
            request.kind === 'stick'
              ? {
                  status: () => stick.status,
                  reattach: () => Promise.resolve(void stick.reattached++),
                  detach: () => void stick.detached++,
                }
              : undefined,
        },
      };
      started.push({ id, request, hooks, job, end, stick });
      return job;
    },
    onBusy: () => events.push('busy'),
    onGone: (id) => events.push(`gone ${id}`),
    onIdle: () => events.push('idle'),
    ...parts,
  });
  return { intake, lines, started, events, stop: () => (stopping = true) };
}

async function makeStick(name: string, yaml = 'version: 1\nmonitoring_points: []\n'): Promise<MountEntry> {
  const root = join(tempFolder('intake'), name);
  await mkdir(root);
  await writeFile(join(root, 'mpprov.yaml'), yaml);
  return { target: root, source: '/dev/sdz1', fstype: 'vfat', device: '8:1', readOnly: false };
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

describe('the job intake: a mount becomes a job', () => {
  it('a mount with an mpprov.yaml starts one job, its request read from the stick', async () => {
    const { intake, started, events } = rig();
    const entry = await makeStick('MPSTICK', 'version: 1\n');
    await intake.mount(entry);
    expect(started).toHaveLength(1);
    expect(started[0]?.request).toEqual({
      kind: 'stick',
      root: entry.target,
      configName: 'mpprov.yaml',
      label: 'MPSTICK',
      device: (await stat(entry.target)).dev,
      configSha256: sha256('version: 1\n'),
    });
    expect(intake.jobs().map((j) => j.id)).toEqual(['j1']);
    expect(events).toEqual(['busy']);
    started[0]?.end();
    await settle();
    expect(intake.jobs()).toEqual([]);
    expect(events).toEqual(['busy', 'gone j1', 'idle']);
  });

  it('a mount without an mpprov.yaml is no stick for mpprov', async () => {
    const { intake, started, lines } = rig();
    const root = tempFolder('intake-empty');
    await intake.mount({ target: root, source: '/dev/sdz1', fstype: 'vfat', device: '8:1', readOnly: false });
    expect(started).toEqual([]);
    expect(lines).toEqual([`debug ${root} mounted (vfat): no mpprov.yaml at its root, not a stick for mpprov`]);
  });

  it('nothing becomes a job once the agent is stopping', async () => {
    const { intake, started, stop } = rig();
    const entry = await makeStick('LATE');
    stop();
    await intake.mount(entry);
    expect(started).toEqual([]);
  });
});

describe('the job intake: one job per configuration at a time', () => {
  it('the same stick seen again while its job runs is that job, until the job settles', async () => {
    const { intake, started, lines } = rig();
    const entry = await makeStick('TWICE');
    await intake.mount(entry);
    await intake.mount(entry);
    expect(started).toHaveLength(1);
    expect(lines).toContain(
      `info [j1] stick at ${entry.target}: the same configuration is already being applied by this job; not started twice`,
    );
    // Its stick side settled (result written): the same stick again is a new job.
    started[0]?.hooks.onSettled();
    await intake.mount(entry);
    expect(started.map((s) => s.id)).toEqual(['j1', 'j2']);
  });

  it('a duplicate whose usb.log had failed puts the log back on the stick', async () => {
    const { intake, started } = rig();
    const entry = await makeStick('BACK');
    await intake.mount(entry);
    const first = started[0];
    if (first === undefined) throw new Error('no job started');
    await intake.mount(entry);
    expect(first.stick.reattached).toBe(0);
    first.stick.status = { ok: false, problem: 'removed', detail: 'gone' };
    await intake.mount(entry);
    expect(first.stick.reattached).toBe(1);
    expect(started).toHaveLength(1);
  });

  it('the same stick with another configuration is another job, and each sees the other using the stick', async () => {
    const { intake, started } = rig();
    const entry = await makeStick('EDITED', 'version: 1\n');
    await intake.mount(entry);
    await writeFile(join(entry.target, 'mpprov.yaml'), 'version: 1\n# edited\n');
    await intake.mount(entry);
    expect(started.map((s) => s.request.configSha256)).toEqual([
      sha256('version: 1\n'),
      sha256('version: 1\n# edited\n'),
    ]);
    expect(started[0]?.hooks.stickInUse(entry.target, 'j1')).toBe(true);
    expect(started[0]?.hooks.stickInUse('/media/elsewhere', 'j1')).toBe(false);
    started[1]?.end();
    await settle();
    expect(started[0]?.hooks.stickInUse(entry.target, 'j1')).toBe(false);
  });

  it('a profile is one job per content; one written again after its writes settled waits for the next settling', async () => {
    const { intake, started, lines } = rig();
    const file = join(tempFolder('intake-profiles'), 'site.yaml');
    await writeFile(file, 'version: 1\n');
    const seen = await stat(file);
    const settled = { ino: seen.ino, size: seen.size, mtimeMs: seen.mtimeMs };
    await intake.profile(file, settled);
    await intake.profile(file, settled);
    expect(started).toHaveLength(1);
    expect(started[0]?.request).toMatchObject({ kind: 'profile', configName: 'site.yaml', label: 'site.yaml' });
    expect(lines).toContain(
      `info [j1] profile ${file}: the same configuration is already being applied by this job; not started twice`,
    );
    await writeFile(file, 'version: 1\n# more\n');
    await intake.profile(file, settled);
    expect(started).toHaveLength(1);
    expect(lines).toContain(
      `debug profile ${file} was written again after its writes settled: it becomes a job once they settle again`,
    );
  });
});

describe('the job intake: a stick that crashed the previous run', () => {
  const crashed = (label: string, sha: string): InterruptedJob => ({
    id: 'j-crashed',
    reason: 'crash',
    where: [],
    marker: {
      id: 'j-crashed',
      started: '2026-01-01T00:00:00.000Z',
      pid: 1,
      stage: 'applying',
      devices: {},
      source: { kind: 'stick', label, location: '/media/x', config: 'mpprov.yaml', config_sha256: sha },
    },
  });

  it('is refused on usb.log and in the journal while it stays in, and runs once taken out and put back', async () => {
    const yaml = 'version: 1\n';
    const entry = await makeStick('CRASHER', yaml);
    const { intake, started, lines } = rig({ crashLoop: createCrashLoopGuard([crashed('CRASHER', sha256(yaml))]) });
    await intake.mount(entry);
    await intake.mount(entry);
    expect(started).toEqual([]);
    const usbLog = await readFile(join(entry.target, 'usb.log'), 'utf8');
    expect(usbLog.match(/ERROR mpprov: this stick is not started: its job j-crashed ended/g)).toHaveLength(2);
    expect(lines.filter((l) => l.startsWith(`error stick at ${entry.target}: this stick is not started`))).toHaveLength(
      2,
    );
    intake.unmount(entry);
    expect(lines.at(-1)).toBe(`info the refused stick at ${entry.target} was taken out: its next insertion runs again`);
    await intake.mount(entry);
    expect(started).toHaveLength(1);
  });
});

describe('the job intake: a stick mounted again while its last mount is looked at', () => {
  /** The real look, held after reading until the test lets it go. */
  const heldLook = () => {
    const waiting: Array<() => void> = [];
    return {
      waiting,
      look: async (root: string) => {
        const seen = await lookAtStick(root);
        await new Promise<void>((go) => waiting.push(go));
        return seen;
      },
    };
  };
  const until = async (check: () => boolean): Promise<void> => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(check()).toBe(true);
  };

  it('two mount events at once are one job, and the second is said to be the same job', async () => {
    const held = heldLook();
    const { intake, started, lines } = rig({ look: held.look });
    const entry = await makeStick('RACE');
    const first = intake.mount(entry);
    const second = intake.mount(entry);
    await until(() => held.waiting.length === 1);
    held.waiting.shift()?.();
    await first;
    await second;
    // The second event is looked at once the first look is done.
    await until(() => held.waiting.length === 1);
    held.waiting.shift()?.();
    await until(() => lines.some((l) => l.includes('not started twice')));
    expect(started).toHaveLength(1);
  });

  it('the content the stick came back with is looked at: changed, it is a job of its own', async () => {
    const held = heldLook();
    const { intake, started } = rig({ look: held.look });
    const entry = await makeStick('SWAP', 'version: 1\n');
    const first = intake.mount(entry);
    await until(() => held.waiting.length === 1);
    await writeFile(join(entry.target, 'mpprov.yaml'), 'version: 1\n# the other stick\n');
    void intake.mount(entry);
    held.waiting.shift()?.();
    await first;
    await until(() => held.waiting.length === 1);
    held.waiting.shift()?.();
    await until(() => started.length === 2);
    expect(started.map((s) => s.request.configSha256)).toEqual([
      sha256('version: 1\n'),
      sha256('version: 1\n# the other stick\n'),
    ]);
  });
});

describe('the job intake: a mount gone', () => {
  it("a running job's usb.log waits for its stick, except while the agent releases the stick itself", async () => {
    const { intake, started, lines } = rig();
    const a = await makeStick('GONE');
    const b = await makeStick('RELEASED');
    await intake.mount(a);
    await intake.mount(b);
    const [jobA, jobB] = started;
    if (jobA === undefined || jobB === undefined) throw new Error('two jobs expected');
    jobB.job.marker.stage = RELEASING;
    intake.unmount(a);
    intake.unmount(b);
    expect(jobA.stick.detached).toBe(1);
    expect(jobB.stick.detached).toBe(0);
    expect(lines).toEqual([`info [j1] the stick at ${a.target} was unmounted; the job goes on from its copy`]);
  });
});
