import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createDeviceLocks, JOB_ID_PATTERN, jobIdSource, newJobId } from '../../src/agent/index.js';
import type { DeviceResult } from '../../src/apply/index.js';
import { isUnderMediaRoot, mediaMounts, parseMountinfo } from '../../src/ingest/index.js';
import { parseFindmntLine, watchMounts } from '../../src/ingest/mount-watcher.js';
import { createAgentLogger } from '../../src/report/agent-logger.js';
import { concludeJob, createEventFormatter, deviceWords, formatJobLine, resultWord } from '../../src/report/index.js';
import { Redactor, Secret } from '../../src/core/index.js';

const device = (name: string, outcome: DeviceResult['outcome'], extra: Partial<DeviceResult> = {}): DeviceResult => ({
  device: name,
  url: `https://${name}`,
  outcome,
  message: 'm',
  steps: [],
  warnings: [],
  durationMs: 1,
  ...extra,
});

describe('the RESULT line', () => {
  it('says CHANGED, NO CHANGE, OK (mixed) or FAILED', () => {
    expect(resultWord([device('a', 'changed')], false)).toBe('CHANGED');
    expect(resultWord([device('a', 'changed'), device('b', 'changed')], false)).toBe('CHANGED');
    expect(resultWord([device('a', 'no-change'), device('b', 'no-change')], false)).toBe('NO CHANGE');
    expect(resultWord([device('a', 'changed'), device('b', 'no-change')], false)).toBe('OK');
    expect(resultWord([device('a', 'changed'), device('b', 'failed')], false)).toBe('FAILED');
    expect(resultWord([], true)).toBe('FAILED');
  });

  it('says per device what happened in a few words', () => {
    expect(deviceWords(device('mp1', 'changed'), false)).toBe('mp1: changed and verified');
    expect(deviceWords(device('mp1', 'no-change'), false)).toBe('mp1: already applied, no restart');
    expect(deviceWords(device('mp1', 'failed', { code: 'MPPROV_DEVICE_AUTH' }), false)).toBe(
      'mp1: failed, wrong user name or password',
    );
    expect(deviceWords(device('mp1', 'failed', { code: 'MPPROV_DEVICE_UNREACHABLE', deviceLost: true }), false)).toBe(
      'mp1: failed, did not come back after the networking restart',
    );
    expect(deviceWords(device('mp1', 'failed', { code: 'MPPROV_DEVICE_PIN_MISMATCH', deviceLost: true }), false)).toBe(
      'mp1: failed, came back from the restart with a different TLS certificate (possible interception): check the device before trusting it',
    );
    expect(
      deviceWords(
        device('mp1', 'failed', { code: 'MPPROV_APPLY_FAILED', rollback: { outcome: 'restored', message: 'x' } }),
        false,
      ),
    ).toBe('mp1: failed, wrong result, rollback restored');
    expect(deviceWords(device('mp1', 'failed', { code: 'MPPROV_PLAN_REFUSED' }), false)).toBe(
      'mp1: failed, refused before any change (would cut off access)',
    );
    expect(
      concludeJob({
        result: {
          file: 'f',
          configSha256: '',
          outcome: 'changed',
          problems: [],
          plans: [],
          devices: [device('a', 'changed'), device('b', 'no-change')],
        },
        configName: 'mpprov.yaml',
        stopped: false,
      }),
    ).toEqual({ word: 'OK', summary: 'a: changed and verified; b: already applied, no restart' });
  });

  it('prefixes every body line with the time and the job id', () => {
    const at = new Date(2026, 10, 22, 12, 48, 0, 7);
    expect(formatJobLine(at, 'j20261122-124800-3fa9', ['one', 'two'])).toBe(
      '12:48:00.007 [j20261122-124800-3fa9] one\n12:48:00.007 [j20261122-124800-3fa9] two\n',
    );
    // One text is one physical line: a newline in it is shown, never obeyed.
    expect(formatJobLine(at, 'j20261122-124800-3fa9', 'one\nRESULT: CHANGED  x\x1b[2K')).toBe(
      '12:48:00.007 [j20261122-124800-3fa9] one\\nRESULT: CHANGED  x\\x1b[2K\n',
    );
  });

  it('logs waiting at most every 5 s per device, and refusals as errors', () => {
    const format = createEventFormatter();
    const wait = (elapsedMs: number) =>
      format({ type: 'waiting', device: 'mp1', description: 'restart', elapsedMs, reason: 'connection refused' });
    expect(wait(250)).toHaveLength(1);
    expect(wait(2_000)).toHaveLength(0);
    expect(wait(5_300)).toHaveLength(1);
    expect(
      format({
        type: 'plan',
        device: 'mp1',
        steps: [],
        hasChanges: true,
        refusals: ['would cut off eth0'],
        diff: [],
        aclDiff: [],
      }),
    ).toEqual([{ level: 'error', text: '[mp1] REFUSED: would cut off eth0' }]);
  });
});

describe('redaction', () => {
  it('is the logger format before any transport, with <N> priorities on journald', async () => {
    const stream = new PassThrough();
    let out = '';
    stream.on('data', (c: Buffer) => (out += c.toString()));
    const redactor = new Redactor();
    const remove = redactor.add([new Secret('Tr0ub4dor&3')]);
    const logger = createAgentLogger({ level: 'debug', redactor, stream, env: { JOURNAL_STREAM: '8:1' } });
    logger.log('warn', 'the device echoed Tr0ub4dor&3 back', 'j20261122-124800-3fa9');
    logger.log(
      'debug',
      `body pw=${encodeURIComponent('Tr0ub4dor&3')}&x=1, or ${Buffer.from('Tr0ub4dor&3').toString('base64')}`,
    );
    remove();
    logger.log('error', 'no longer known: Tr0ub4dor&3');
    await new Promise((r) => setImmediate(r));
    expect(out.split('\n')).toEqual([
      '<4>[j20261122-124800-3fa9] the device echoed (secret) back',
      '<7>body pw=(secret)&x=1, or (secret)',
      '<3>no longer known: Tr0ub4dor&3',
      '',
    ]);
  });
});

describe('the mount table', () => {
  const table = [
    '22 27 0:21 / /proc rw,relatime - proc proc rw',
    '41 27 8:17 / /media/tech/MY\\040STICK rw,nosuid,nodev shared:1 - vfat /dev/sdb1 rw,uid=1000',
    '42 27 0:39 / /run/media/tech/MP ro,nosuid - fuse.fusefat fusefat ro',
    '43 27 0:40 / /mediaplayer rw - ext4 /dev/sdc1 rw',
  ].join('\n');

  it('parses mountinfo, unescaping names, and picks the mounts under the media roots', () => {
    const entries = parseMountinfo(table);
    expect(entries[1]).toEqual({
      target: '/media/tech/MY STICK',
      source: '/dev/sdb1',
      fstype: 'vfat',
      device: '8:17',
      readOnly: false,
    });
    expect(entries[2]?.readOnly).toBe(true);
    expect([...mediaMounts(entries, ['/media', '/run/media/']).keys()]).toEqual([
      '/media/tech/MY STICK',
      '/run/media/tech/MP',
    ]);
    expect(isUnderMediaRoot('/mnt', ['/mnt'])).toBe(true);
    expect(isUnderMediaRoot('/mediaplayer', ['/media'])).toBe(false);
  });

  it("reads findmnt's event lines", () => {
    expect(parseFindmntLine('ACTION="umount" TARGET="/media/tech/MY STICK" OLD-TARGET="/media/tech/MY STICK"')).toEqual(
      {
        ACTION: 'umount',
        TARGET: '/media/tech/MY STICK',
        'OLD-TARGET': '/media/tech/MY STICK',
      },
    );
    expect(parseFindmntLine('ACTION="mount" TARGET="/media/a\\x22b" OLD-TARGET=""')).toEqual({
      ACTION: 'mount',
      TARGET: '/media/a"b',
      'OLD-TARGET': '',
    });
  });

  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const until = async (check: () => boolean): Promise<void> => {
    for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  };

  it('without findmnt, re-reads the table every interval and reports mounts coming and going', async () => {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-mounts-'));
    const file = join(dir, 'mountinfo');
    await writeFile(file, '22 27 0:21 / /proc rw - proc proc rw\n');
    const events: string[] = [];
    const notices: string[] = [];
    const watcher = await watchMounts({
      mediaRoots: ['/media'],
      mountinfoFile: file,
      findmntCommand: join(dir, 'no-such-findmnt'),
      pollIntervalMs: 20,
      onMount: (e) => events.push(`+${e.target}`),
      onUnmount: (e) => events.push(`-${e.target}`),
      onNotice: (m) => notices.push(m),
    });
    await until(() => watcher.mode() === 'polling');
    await writeFile(file, '22 27 0:21 / /proc rw - proc proc rw\n50 27 0:50 / /media/S rw - vfat /dev/sdb1 rw\n');
    await until(() => events.length === 1);
    // The same folder, another device: the stick was swapped.
    await writeFile(file, '22 27 0:21 / /proc rw - proc proc rw\n51 27 0:51 / /media/S rw - vfat /dev/sdc1 rw\n');
    await until(() => events.length === 3);
    await writeFile(file, '22 27 0:21 / /proc rw - proc proc rw\n');
    await until(() => events.length === 4);
    await watcher.close();
    expect(watcher.mode()).toBe('polling');
    expect(notices[0]).toMatch(/no-such-findmnt is not installed: re-reading .* every 20 ms instead/);
    expect(events).toEqual(['+/media/S', '-/media/S', '+/media/S', '-/media/S']);
  });

  it('restarts findmnt when it dies, and picks up what changed meanwhile', async () => {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-mounts-'));
    const file = join(dir, 'mountinfo');
    const fake = join(dir, 'findmnt');
    await writeFile(file, '');
    // A findmnt that dies at once, as a crashed one would.
    await writeFile(fake, '#!/bin/sh\nexit 3\n', { mode: 0o755 });
    const events: string[] = [];
    const notices: string[] = [];
    const watcher = await watchMounts({
      mediaRoots: ['/media'],
      mountinfoFile: file,
      findmntCommand: fake,
      onMount: (e) => events.push(`+${e.target}`),
      onUnmount: () => undefined,
      onNotice: (m) => notices.push(m),
    });
    await until(() => notices.length >= 1);
    await writeFile(file, '50 27 0:50 / /media/S rw - vfat /dev/sdb1 rw\n');
    await until(() => events.length === 1 && notices.length >= 2);
    await watcher.close();
    expect(watcher.mode()).toBe('findmnt');
    expect(notices.slice(0, 2)).toEqual([
      `${fake} --poll exited (status 3); restarting it in 200 ms`,
      `${fake} --poll exited (status 3); restarting it in 1000 ms`,
    ]);
    expect(events).toEqual(['+/media/S']);
  });
});

describe('jobs', () => {
  it('have ids like j20261122-124800-3fa9', () => {
    expect(newJobId(new Date(Date.UTC(2026, 10, 22, 12, 48, 0)), () => '3fa9')).toBe('j20261122-124800-3fa9');
    expect(newJobId()).toMatch(JOB_ID_PATTERN);
  });

  it('never get an id twice from one agent, though 16 random bits repeat within a second', () => {
    let clock = Date.UTC(2026, 10, 22, 12, 48, 0);
    const draws = ['3fa9', '3fa9', '3fa9', '0001', '3fa9', '3fa9'];
    const next = jobIdSource(
      () => new Date(clock),
      () => draws.shift() ?? 'ffff',
    );
    expect([next(), next()]).toEqual(['j20261122-124800-3fa9', 'j20261122-124800-0001']);
    // A new second: the same random part is a new id.
    clock += 1000;
    expect([next(), next()]).toEqual(['j20261122-124801-3fa9', 'j20261122-124801-ffff']);
  });

  it('take device locks in sorted order: one job per device, others in parallel', async () => {
    const locks = createDeviceLocks();
    const order: string[] = [];
    const releaseA = await locks.acquire(['https://b', 'https://a'], 'job-a');
    const c = locks.acquire(['https://c'], 'job-c').then((release) => {
      order.push('c');
      return release;
    });
    const b = locks.acquire(['https://a'], 'job-b').then((release) => {
      order.push('b');
      return release;
    });
    (await c)();
    expect(order).toEqual(['c']);
    expect(locks.holders(['https://a', 'https://c'])).toEqual(new Map([['https://a', 'job-a']]));
    releaseA();
    (await b)();
    expect(order).toEqual(['c', 'b']);
    expect(locks.holders(['https://a', 'https://b'])).toEqual(new Map());
  });

  it('stop waiting for a lock when the agent stops', async () => {
    const locks = createDeviceLocks();
    const release = await locks.acquire(['https://a'], 'one');
    const abort = new AbortController();
    const waiting = locks.acquire(['https://a'], 'two', abort.signal);
    abort.abort(new Error('stopped by SIGTERM'));
    await expect(waiting).rejects.toThrow('stopped by SIGTERM');
    release();
    expect(locks.holders(['https://a'])).toEqual(new Map());
  });
});
