import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliPath, useProcesses, type StartedProcess } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';
import { waitFor } from '../daemon/agent-process.js';
import { endedJob, fakeNotifySend, runningJob, writeStatus } from './notify-rig.js';

/**
 * `mpprov notify` as a real child process, with a fake notify-send first on PATH recording every
 * call, and a status file the test rewrites (tmp + rename) as the agent would.
 */

const normal = (body: string): string[] => ['--app-name=mpprov', '--urgency=normal', '--', 'mpprov', body];
const critical = (body: string): string[] => ['--app-name=mpprov', '--urgency=critical', '--', 'mpprov', body];

describe('mpprov notify', () => {
  const processes = useProcesses();

  async function start(statusFile: string, path: string, cwd?: string): Promise<StartedProcess> {
    const p = await processes.startNode([cliPath, 'notify', '--status-file', statusFile], {
      env: { PATH: path },
      ...(cwd === undefined ? {} : { cwd }),
    });
    expect(p.firstLine).toBe(
      `mpprov notify: following ${statusFile}: one desktop notification (notify-send) per job that ends from now on`,
    );
    return p;
  }

  const until = (p: StartedProcess, check: () => Promise<boolean> | boolean, what: string): Promise<void> =>
    waitFor(check, 10_000, what, () => Promise.resolve(p.output()), p.exited);

  async function world(): Promise<{
    dir: string;
    file: string;
    fake: Awaited<ReturnType<typeof fakeNotifySend>>;
    path: string;
  }> {
    const dir = tempFolder('notify-status');
    const fake = await fakeNotifySend();
    return { dir, file: join(dir, 'status.json'), fake, path: `${fake.bin}:/usr/bin:/bin` };
  }

  it('announces a stick job that ends while it watches, exactly once, and exits 0 on SIGTERM', async () => {
    const { file, fake, path } = await world();
    const job = runningJob('20261123-105210-ab12', 'MPSTICK', ['branch-12-mp1']);
    await writeStatus(file, [job]);
    const p = await start(file, path);

    await writeStatus(file, [endedJob(job, 'CHANGED')]);
    await until(p, async () => (await fake.calls()).length >= 1, 'the first notification');
    // The agent rewrites the file after the end too (here with a field a newer agent might add,
    // which is ignored): the job is not announced again.
    await writeStatus(file, [{ ...endedJob(job, 'CHANGED'), eject_ms: 812 } as never]);
    const later = runningJob('20261123-105300-cd34', 'MPSTICK', ['branch-12-mp2']);
    await writeStatus(file, [later, endedJob(job, 'CHANGED')]);
    await writeStatus(file, [endedJob(later, 'CHANGED'), endedJob(job, 'CHANGED')]);
    await until(p, async () => (await fake.calls()).length >= 2, 'the second notification');

    expect(await fake.calls()).toEqual([
      normal('Stick MPSTICK: branch-12-mp1 configured, safe to remove'),
      normal('Stick MPSTICK: branch-12-mp2 configured, safe to remove'),
    ]);
    expect(p.stdout()).toContain(
      'mpprov notify: [20261123-105210-ab12] normal: Stick MPSTICK: branch-12-mp1 configured, safe to remove\n',
    );
    expect(p.stderr()).toBe('');
    expect(await p.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('says NO CHANGE and a profile job in their own words, and FAILED as critical with the advice (or the summary), cut to length', async () => {
    const { file, fake, path } = await world();
    await writeStatus(file, []);
    const p = await start(file, path);
    const same = runningJob('j1', 'MPSTICK', ['mp1', 'mp2']);
    const profile = runningJob('j2', 'branch-12.yaml', ['mp3'], 'profile');
    const failed = runningJob('j3', 'FIELD', ['branch-12-mp1']);
    const noAdvice = runningJob('j4', 'FIELD2', ['mp4']);
    await writeStatus(file, [noAdvice, failed, profile, same]);
    await writeStatus(file, [
      endedJob(noAdvice, 'FAILED', { summary: 'mp4: failed: bad credentials for admin at https://192.0.2.14' }),
      endedJob(failed, 'FAILED', {
        advice: 'check the password of admin in mpprov.yaml, then insert the stick again '.repeat(6),
      }),
      endedJob(profile, 'CHANGED'),
      endedJob(same, 'NO CHANGE'),
    ]);
    await until(p, async () => (await fake.calls()).length >= 4, 'four notifications');

    const advice = 'check the password of admin in mpprov.yaml, then insert the stick again '.repeat(6).trim();
    const longBody = `Stick FIELD: branch-12-mp1 FAILED: ${advice}`;
    expect(longBody.length).toBeGreaterThan(300);
    expect(await fake.calls()).toEqual([
      normal('Stick MPSTICK: mp1, mp2 already configured, nothing changed, safe to remove'),
      normal('Profile branch-12.yaml: mp3 configured'),
      critical(`${longBody.slice(0, 299).trimEnd()}…`),
      critical('Stick FIELD2: mp4 FAILED: mp4: failed: bad credentials for admin at https://192.0.2.14'),
    ]);
    expect(p.stdout()).toContain(
      'mpprov notify: [j4] critical: Stick FIELD2: mp4 FAILED: mp4: failed: bad credentials for admin at https://192.0.2.14\n',
    );
    expect(await p.stop('SIGINT')).toEqual({ code: 0, signal: null });
  });

  it('does not announce jobs that had ended before it started, but does announce a short job it never saw running', async () => {
    const { file, fake, path } = await world();
    const old = endedJob(runningJob('old', 'OLDSTICK', ['mp0']), 'CHANGED', {
      finished: new Date(Date.now() - 60_000).toISOString(),
    });
    await writeStatus(file, [old]);
    const p = await start(file, path);
    // Ended between two reads: never seen running.
    const short = endedJob(runningJob('short', 'QUICK', ['mp9']), 'NO CHANGE');
    await writeStatus(file, [short, old]);
    await until(p, async () => (await fake.calls()).length >= 1, 'the short job');
    // A third write with a third job proves the old one is not announced late.
    const third = endedJob(runningJob('third', 'THIRD', ['mp8']), 'CHANGED');
    await writeStatus(file, [third, short, old]);
    await until(p, async () => (await fake.calls()).length >= 2, 'the third job');
    expect(await fake.calls()).toEqual([
      normal('Stick QUICK: mp9 already configured, nothing changed, safe to remove'),
      normal('Stick THIRD: mp8 configured, safe to remove'),
    ]);
    expect(p.stdout()).not.toContain('OLDSTICK');
    expect(await p.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('passes a hostile label and device name verbatim as one argument each, never as an option nor through a shell', async () => {
    const { dir, file, fake, path } = await world();
    await writeStatus(file, []);
    // Run in `dir`: a shell that ran the label would leave PWNED there.
    const p = await start(file, path, dir);
    const marker = join(dir, 'PWNED');
    const label = `-rf --urgency=low $(touch PWNED); \`touch PWNED\` | & > '"`;
    const name = '--help';
    await writeStatus(file, [endedJob(runningJob('evil', label, [name], 'profile'), 'CHANGED')]);
    await until(p, async () => (await fake.calls()).length >= 1, 'the notification');
    // Verbatim but for the notification markup's three characters (& < >), escaped.
    const escaped = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    expect(await fake.calls()).toEqual([normal(escaped(`Profile ${label}: --help configured`))]);
    // A label that starts the body: the body itself begins with '-' and still follows `--`.
    await writeStatus(file, [endedJob(runningJob('evil2', 'x', []), 'FAILED', { label: 'x', advice: `-${label}` })]);
    await until(p, async () => (await fake.calls()).length >= 2, 'the second notification');
    expect((await fake.calls())[1]).toEqual(critical(escaped(`Stick x FAILED: -${label}`)));
    expect(existsSync(marker)).toBe(false);
    expect(await p.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('survives a malformed, empty, oversized or off-contract file with one warning per problem, then announces from a good one', async () => {
    const { file, fake, path } = await world();
    await writeStatus(file, '{"format": 1, "agent": {');
    const p = await start(file, path);
    await until(p, () => p.stderr().includes('is not valid JSON'), 'the malformed warning');
    // The same broken file again (rewritten, and re-read by the poll): no second line.
    await writeStatus(file, '{"format": 1, "agent": {');
    await writeStatus(file, '');
    await until(p, () => p.stderr().includes('(empty)'), 'the empty warning');
    await writeStatus(file, `{"format":1,"pad":"${'x'.repeat(1024 * 1024)}"}`);
    await until(p, () => p.stderr().includes('larger than 1048576 bytes'), 'the oversized warning');
    await writeStatus(file, JSON.stringify({ format: 2, jobs: [] }));
    await until(p, () => p.stderr().includes('not an mpprov status file of format 1'), 'the format warning');
    // A good envelope with one job the reader does not understand: that job is skipped, said once.
    const job = runningJob('good', 'MPSTICK', ['branch-12-mp1']);
    await writeStatus(file, [job, { id: 'weird', kind: 'floppy' } as never]);
    await writeStatus(file, [endedJob(job, 'CHANGED'), { id: 'weird', kind: 'floppy' } as never]);
    await until(p, async () => (await fake.calls()).length >= 1, 'the notification');
    expect(await fake.calls()).toEqual([normal('Stick MPSTICK: branch-12-mp1 configured, safe to remove')]);
    expect(p.child.exitCode).toBeNull();
    expect(p.stderr().split('\n')).toEqual([
      `mpprov notify: warning: ${file} is not valid JSON (half-written or damaged)`,
      `mpprov notify: warning: ${file} is not valid JSON (empty)`,
      `mpprov notify: warning: ${file} is larger than 1048576 bytes: not the agent's status file`,
      `mpprov notify: warning: ${file} is not an mpprov status file of format 1: format: Invalid input: expected 1`,
      `mpprov notify: warning: ${file}: job "weird" skipped, it does not match the status format: kind: Invalid option: expected one of "stick"|"profile"`,
      '',
    ]);
    expect(p.stdout()).toContain(`mpprov notify: reading ${file} again\n`);
    expect(await p.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it(
    'waits for a directory that does not exist yet, watches it once made, and again after it is removed and made anew',
    { timeout: 40_000 },
    async () => {
      const { dir, fake, path } = await world();
      const runtime = join(dir, 'run', 'mpprov');
      const file = join(runtime, 'status.json');
      const p = await start(file, path);
      await until(p, () => p.stderr().includes(`${runtime} does not exist (yet)`), 'the missing directory warning');
      await mkdir(runtime, { recursive: true });
      const job = runningJob('late', 'MPSTICK', ['branch-12-mp1']);
      await writeStatus(file, [job]);
      await writeStatus(file, [endedJob(job, 'CHANGED')]);
      await until(p, async () => (await fake.calls()).length >= 1, 'the notification after the directory appeared');

      // systemd removes the runtime directory when the agent stops, and makes a new one at its start.
      await rm(runtime, { recursive: true });
      await until(
        p,
        () => p.stderr().split(`${runtime} does not exist (yet)`).length === 3,
        'the directory to be missed again',
      );
      await mkdir(runtime);
      const next = runningJob('next', 'MPSTICK2', ['branch-12-mp2']);
      await writeStatus(file, [next], { pid: 5151 });
      await writeStatus(file, [endedJob(next, 'FAILED', { advice: 'plug the Monitoring Point in' })], { pid: 5151 });
      await until(p, async () => (await fake.calls()).length >= 2, 'the notification in the new directory');
      expect(await fake.calls()).toEqual([
        normal('Stick MPSTICK: branch-12-mp1 configured, safe to remove'),
        critical('Stick MPSTICK2: branch-12-mp2 FAILED: plug the Monitoring Point in'),
      ]);
      expect(await p.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    },
  );

  it('without notify-send on PATH says so once, keeps the notifications in its log and keeps running', async () => {
    const { dir, file } = await world();
    const empty = join(dir, 'empty-bin');
    await mkdir(empty);
    await writeStatus(file, []);
    const p = await start(file, empty);
    await writeStatus(file, [endedJob(runningJob('a', 'ONE', ['mp1']), 'CHANGED')]);
    await until(p, () => p.stderr().includes('notify-send not found'), 'the missing notify-send warning');
    await writeStatus(file, [
      endedJob(runningJob('b', 'TWO', ['mp2']), 'NO CHANGE'),
      endedJob(runningJob('a', 'ONE', ['mp1']), 'CHANGED'),
    ]);
    await until(p, () => p.stdout().includes('[b] normal:'), 'the second notification line');
    // The second notify-send attempt has had time to fail as well.
    await new Promise((r) => setTimeout(r, 500));
    expect(p.stdout()).toContain('mpprov notify: [a] normal: Stick ONE: mp1 configured, safe to remove\n');
    expect(p.stdout()).toContain(
      'mpprov notify: [b] normal: Stick TWO: mp2 already configured, nothing changed, safe to remove\n',
    );
    expect(p.stderr()).toBe(
      'mpprov notify: warning: notify-send not found: install libnotify-bin (the notification is only in this log)\n',
    );
    expect(p.child.exitCode).toBeNull();
    expect(await p.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('documents itself in --help', async () => {
    const { dir } = await world();
    await writeFile(join(dir, 'x'), '');
    const p = await processes.startNode([cliPath, 'notify', '--help']);
    await p.exited;
    expect(p.stdout()).toContain('Usage: mpprov notify [options]');
    expect(p.stdout()).toContain('--status-file <file>');
    expect(p.stdout()).toContain('/run/mpprov/status.json');
  });
});
