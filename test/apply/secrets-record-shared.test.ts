import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSecretsRecord, SECRETS_RECORD_FILE } from '../../src/apply/index.js';
import { Secret } from '../../src/config/index.js';
import { repoRoot } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/** The record kept outside the state directory, as a team shares it: key ids, formats, the lock, several processes. */

const URL = 'https://192.0.2.10';
const STANZA = 'eth1 inet';
const PASS = new Secret('Shared-Record-Pass-7');

type Stored = {
  version: number;
  devices: Record<string, { key_id: string; stanzas: Record<string, Record<string, string>> }>;
};
const readStored = (file: string): Stored => JSON.parse(readFileSync(file, 'utf8')) as Stored;

describe('a record made with another key', () => {
  it('is said for the devices it concerns, matches nothing, and is taken over by the next save', async () => {
    const record = join(tempFolder('team'), 'record.json');
    const mine = await openSecretsRecord(tempFolder('state'), { file: record });
    mine.remember(URL, STANZA, 'wpa_password', PASS);
    mine.remember('https://192.0.2.11', STANZA, 'wpa_password', PASS);
    await mine.save(URL);
    await mine.save('https://192.0.2.11');
    const ownId = readStored(record).devices[URL]?.key_id;
    expect(ownId).toMatch(/^[0-9a-f]{16}$/);

    const other = await openSecretsRecord(tempFolder('state'), { file: record });
    expect(other.known(URL, STANZA, 'wpa_password', PASS)).toBe(false);
    expect(other.warnings([URL]).map((w) => w.sentence)).toEqual([
      `the secrets record ${record} was made with another key; every secret counts as changed (to share a record, import its key: mpprov secrets-record import --key-in FILE)`,
    ]);
    expect(other.warnings(['https://192.0.2.99'])).toEqual([]);
    other.remember(URL, STANZA, 'wpa_password', PASS);
    await other.save(URL);
    const after = readStored(record);
    expect(after.devices[URL]?.key_id).not.toBe(ownId);
    // The other device's entry is untouched: each save replaces only its own device.
    expect(after.devices['https://192.0.2.11']?.key_id).toBe(ownId);
  });

  it("a format-2 record (no key ids) counts as this installation's and is written back as format 3", async () => {
    const state = tempFolder('state');
    const first = await openSecretsRecord(state);
    first.remember(URL, STANZA, 'wpa_password', PASS);
    await first.save(URL);
    const file = join(state, SECRETS_RECORD_FILE);
    const v3 = readStored(file);
    const stanzas = v3.devices[URL]?.stanzas;
    expect(stanzas).toBeDefined();
    writeFileSync(file, JSON.stringify({ version: 2, devices: { [URL]: stanzas } }));
    const reopened = await openSecretsRecord(state);
    expect(reopened.warnings([URL])).toEqual([]);
    expect(reopened.known(URL, STANZA, 'wpa_password', PASS)).toBe(true);
    await reopened.save(URL);
    expect(readStored(file)).toEqual(v3);
  });
});

describe('writing a shared record', () => {
  it('keeps the mode a team gave the file (a new one is 0600) and leaves no lock or temporary file', async () => {
    const dir = tempFolder('team');
    const record = join(dir, 'record.json');
    const r = await openSecretsRecord(tempFolder('state'), { file: record });
    r.remember(URL, STANZA, 'wpa_password', PASS);
    await r.save(URL);
    expect(statSync(record).mode & 0o777).toBe(0o600);
    // 0660 for a team's group: the umask (022 here) must not take the group's write bit away.
    chmodSync(record, 0o660);
    await r.save(URL);
    expect(statSync(record).mode & 0o777).toBe(0o660);
    expect(existsSync(`${record}.lock`)).toBe(false);
  });

  it('waits for a held lock, and removes one a crash left (older than 10 s)', async () => {
    const record = join(tempFolder('team'), 'record.json');
    const r = await openSecretsRecord(tempFolder('state'), { file: record });
    r.remember(URL, STANZA, 'wpa_password', PASS);
    writeFileSync(record, '{"version": 3, "devices": {}}');
    writeFileSync(`${record}.lock`, 'held\n');
    const started = Date.now();
    const saved = r.save(URL);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Still waiting: nothing is written while another holds the lock.
    expect(readStored(record).devices).toEqual({});
    rmSync(`${record}.lock`);
    await saved;
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(Object.keys(readStored(record).devices)).toEqual([URL]);

    writeFileSync(`${record}.lock`, 'left by a crash\n');
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${record}.lock`, old, old);
    r.remember('https://192.0.2.12', STANZA, 'wpa_password', PASS);
    await r.save('https://192.0.2.12');
    expect(Object.keys(readStored(record).devices).sort()).toEqual([URL, 'https://192.0.2.12']);
    expect(existsSync(`${record}.lock`)).toBe(false);
  });

  it('four processes saving 25 devices each at the same time keep all 100', { timeout: 60_000 }, async () => {
    const record = join(tempFolder('team'), 'record.json');
    const state = tempFolder('state');
    // The built module (npm run build), in real child processes: each its own SecretsRecord, its own queue.
    const script = `
      const { openSecretsRecord } = await import(${JSON.stringify(join(repoRoot, 'dist/apply/index.js'))});
      const { Secret } = await import(${JSON.stringify(join(repoRoot, 'dist/core/secret.js'))});
      const [state, record, name] = process.argv.slice(1);
      const r = await openSecretsRecord(state, { file: record });
      const saves = [];
      for (let i = 0; i < 25; i++) {
        const url = 'https://' + name + '-' + i;
        r.remember(url, 'eth1 inet', 'wpa_password', new Secret('p-' + i));
        saves.push(r.save(url));
      }
      await Promise.all(saves);
    `;
    const run = (name: string): Promise<number | null> =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script, state, record, name], {
          stdio: ['ignore', 'inherit', 'inherit'],
        });
        child.on('error', reject);
        child.on('close', resolve);
      });
    expect(await Promise.all(['a', 'b', 'c', 'd'].map(run))).toEqual([0, 0, 0, 0]);
    const devices = Object.keys(readStored(record).devices);
    expect(devices).toHaveLength(100);
    const r = await openSecretsRecord(state, { file: record });
    expect(r.known('https://c-7', 'eth1 inet', 'wpa_password', new Secret('p-7'))).toBe(true);
  });
});
