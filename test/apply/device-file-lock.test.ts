import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
    // Another process takes the lock through flock(1) exactly as a run does, then is killed.
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
