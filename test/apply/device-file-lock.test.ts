import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockDevice, lockFileName, lockFolder } from '../../src/apply/device-file-lock.js';
import { secretKnownBy, UpdateSecrets } from '../../src/apply/secret-update-policy.js';
import { openSecretsRecord } from '../../src/apply/index.js';
import { literalDeviceIdentity } from '../../src/client/index.js';
import { ErrorCode, MpprovError } from '../../src/core/errors.js';
import { Secret } from '../../src/config/index.js';
import { tempFolder } from '../support/temp-folder.js';

const KEY = 'https://192.0.2.10:8443';

describe('the per-device lock file', () => {
  it('names the device by its key in the state folder, letters, digits, dots and dashes only', () => {
    expect(lockFileName(KEY)).toBe('192.0.2.10_8443.lock');
    expect(lockFileName('https://[2001:db8::1]')).toBe('_2001_db8__1_.lock');
  });

  it('a second run fails in one sentence naming the run that holds the lock, and takes it once it is free', async () => {
    const stateDir = tempFolder('lock');
    const first = await lockDevice([KEY], { stateDir, waitMs: 0, run: 'mpprov apply first.yaml' });
    const file = join(lockFolder(stateDir), lockFileName(KEY));
    expect(readFileSync(file, 'utf8')).toMatch(/^mpprov apply first\.yaml on \S+ \(pid \d+\) since \d{4}-/);
    const refused = await lockDevice([KEY], { stateDir, waitMs: 0, run: 'mpprov apply second.yaml' }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(MpprovError);
    expect((refused as MpprovError).code).toBe(ErrorCode.DeviceBusy);
    expect((refused as MpprovError).message).toMatch(
      /^another run holds this device's lock \(mpprov apply first\.yaml on \S+ \(pid \d+\) since [^)]+\) and did not finish within 0 s; this run sent nothing to it$/,
    );
    await first();
    const second = await lockDevice([KEY], { stateDir, waitMs: 0, run: 'mpprov apply second.yaml' });
    expect(readFileSync(file, 'utf8')).toContain('mpprov apply second.yaml');
    await second();
  });

  it('a waiting run gets the lock when the holder lets go', async () => {
    const stateDir = tempFolder('lock');
    const first = await lockDevice([KEY], { stateDir, waitMs: 0, run: 'first' });
    const order: string[] = [];
    const waiting = lockDevice([KEY], { stateDir, waitMs: 60_000, run: 'second' }).then((free) => {
      order.push('second locked');
      return free;
    });
    order.push('first frees');
    await first();
    const free = await waiting;
    expect(order).toEqual(['first frees', 'second locked']);
    await free();
  });

  it('a process holding a lock that dies (SIGKILL) frees the device at once', async () => {
    const stateDir = tempFolder('lock');
    const file = join(lockFolder(stateDir), lockFileName(KEY));
    // Another process takes the lock through util-linux's flock(1) (as a script or an older mpprov would), then is killed.
    await lockDevice([KEY], { stateDir, waitMs: 0, run: 'probe' }).then((free) => free());
    const holder = spawn('flock', ['--exclusive', file, 'sh', '-c', 'echo locked; exec cat >/dev/null'], {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    await new Promise((resolve) => holder.stdout.once('data', resolve));
    const busy = await lockDevice([KEY], { stateDir, waitMs: 0, run: 'second' }).catch((error: unknown) => error);
    expect(busy).toBeInstanceOf(MpprovError);
    const gone = new Promise((resolve) => holder.on('close', resolve));
    holder.kill('SIGKILL');
    await gone;
    const free = await lockDevice([KEY], { stateDir, waitMs: 5_000, run: 'third' });
    await free();
  });
});

/** The commands of this process's children (every thread's), from /proc. */
function childCommands(): string[] {
  const tasks = readdirSync(`/proc/${process.pid}/task`);
  const pids = tasks.flatMap((task) =>
    readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean),
  );
  return pids.map((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
}

/** flock(1)'s view of a lock file from another process: 75 held, 0 free. */
function flockStatus(file: string): number | null {
  return spawnSync('flock', ['--exclusive', '--nonblock', '--conflict-exit-code', '75', file, 'true']).status;
}

describe('the per-device lock costs one helper process per run, not one per device', () => {
  it('ten devices locked at once are held by one process, and flock(1) sees each lock until it is freed', async () => {
    const stateDir = tempFolder('lock');
    const keys = Array.from({ length: 10 }, (_, i) => `https://192.0.2.${i + 1}:8443`);
    const frees = await Promise.all(keys.map((key) => lockDevice([key], { stateDir, waitMs: 0, run: 'many' })));
    expect(frees).toHaveLength(10);
    expect(childCommands()).toEqual(['perl']);
    const files = keys.map((key) => join(lockFolder(stateDir), lockFileName(key)));
    expect(files.map(flockStatus)).toEqual(Array<number>(10).fill(75));
    for (const free of frees) await free();
    expect(files.map(flockStatus)).toEqual(Array<number>(10).fill(0));
  });

  it('a wait stopped by the run’s signal fails in its sentence and leaves the lock to others', async () => {
    const stateDir = tempFolder('lock');
    const first = await lockDevice([KEY], { stateDir, waitMs: 0, run: 'first' });
    const stop = new AbortController();
    const waiting = lockDevice([KEY], { stateDir, waitMs: 60_000, run: 'second', signal: stop.signal }).catch(
      (error: unknown) => error,
    );
    stop.abort();
    const stopped = await waiting;
    expect(stopped).toBeInstanceOf(MpprovError);
    expect((stopped as MpprovError).message).toBe('stopped while waiting for the device lock; nothing was sent');
    await first();
    const third = await lockDevice([KEY], { stateDir, waitMs: 0, run: 'third' });
    await third();
  });

  it('a wait that runs out says how long it waited', async () => {
    const stateDir = tempFolder('lock');
    const first = await lockDevice([KEY], { stateDir, waitMs: 0, run: 'mpprov apply first.yaml' });
    const refused = await lockDevice([KEY], { stateDir, waitMs: 1_000, run: 'second' }).catch(
      (error: unknown) => error,
    );
    expect((refused as MpprovError).message).toMatch(
      /^another run holds this device's lock \(mpprov apply first\.yaml on .+\) and did not finish within 1 s; this run sent nothing to it$/,
    );
    await first();
  });

  it('a helper killed under its locks frees them (the kernel does), and the next lock starts another', async () => {
    const stateDir = tempFolder('lock');
    const file = join(lockFolder(stateDir), lockFileName(KEY));
    const held = await lockDevice([KEY], { stateDir, waitMs: 0, run: 'first' });
    const helpers = readdirSync(`/proc/${process.pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean),
    );
    expect(helpers).toHaveLength(1);
    process.kill(Number(helpers[0]), 'SIGKILL');
    await held();
    expect(flockStatus(file)).toBe(0);
    const again = await lockDevice([KEY], { stateDir, waitMs: 5_000, run: 'second' });
    expect(flockStatus(file)).toBe(75);
    await again();
  });
});

describe('update_secrets: when a secret the device holds is sent again', () => {
  const device = literalDeviceIdentity('https://192.0.2.10');
  const stanza = 'eth1 inet';
  const field = 'wpa_password';

  it('on_create counts a secret with no record entry as the device’s own, and one the record says changed as changed', async () => {
    const record = await openSecretsRecord(tempFolder('policy'));
    const known = secretKnownBy(UpdateSecrets.OnCreate, record, device);
    expect(known(stanza, field, new Secret('first-Secret-1'))).toBe(true);
    record.remember(device, stanza, field, new Secret('first-Secret-1'));
    expect(known(stanza, field, new Secret('first-Secret-1'))).toBe(true);
    expect(known(stanza, field, new Secret('second-Secret-2'))).toBe(false);
  });

  it('on_change sends a secret the record does not hold; always sends every time', async () => {
    const record = await openSecretsRecord(tempFolder('policy'));
    expect(secretKnownBy(UpdateSecrets.OnChange, record, device)(stanza, field, new Secret('s-1'))).toBe(false);
    record.remember(device, stanza, field, new Secret('s-1'));
    expect(secretKnownBy(UpdateSecrets.OnChange, record, device)(stanza, field, new Secret('s-1'))).toBe(true);
    expect(secretKnownBy(UpdateSecrets.Always, record, device)(stanza, field, new Secret('s-1'))).toBe(false);
  });
});
