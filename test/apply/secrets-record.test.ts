import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSecretsRecord, SECRETS_RECORD_FILE, SECRETS_RECORD_KEY_FILE } from '../../src/apply/index.js';
import { Secret } from '../../src/config/index.js';

describe('secrets record', () => {
  it('keeps keyed hashes only, mode 0600, and knows a secret again after reopening', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-record-'));
    const record = await openSecretsRecord(dir);
    record.remember('https://a', 'eth1 inet', 'wpa_password', new Secret('record-SeCrEt-1'));
    await record.save('https://a');
    const file = join(dir, 'secrets-record.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain('record-SeCrEt-1');
    const again = await openSecretsRecord(dir);
    expect(again.known('https://a', 'eth1 inet', 'wpa_password', new Secret('record-SeCrEt-1'))).toBe(true);
    expect(again.known('https://a', 'eth1 inet', 'wpa_password', new Secret('another'))).toBe(false);
  });

  it("two jobs saving at the same moment keep each other's devices", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-record-'));
    const [a, b] = await Promise.all([openSecretsRecord(dir), openSecretsRecord(dir)]);
    if (a === undefined || b === undefined) throw new Error('records did not open');
    const saves: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      a.remember(`https://a${i}`, 'eth1 inet', 'wpa_password', new Secret(`a-${i}`));
      b.remember(`https://b${i}`, 'eth1 inet', 'wpa_password', new Secret(`b-${i}`));
      saves.push(a.save(`https://a${i}`), b.save(`https://b${i}`));
    }
    await Promise.all(saves);
    const devices = Object.keys(
      (JSON.parse(readFileSync(join(dir, 'secrets-record.json'), 'utf8')) as { devices: object }).devices,
    );
    expect(devices).toHaveLength(40);
  });
});

describe('the record alone confirms nothing', () => {
  const URL = 'https://a';
  const CONTEXT = [URL, 'eth1 inet', 'wpa_password'];

  /** Every string in a JSON value (keys and values): all a thief holding only the record has. */
  function stringsOf(value: unknown): string[] {
    if (typeof value === 'string') return [value];
    if (typeof value !== 'object' || value === null) return [];
    return Object.entries(value).flatMap(([k, v]) => [k, ...stringsOf(v)]);
  }

  it('keeps its HMAC key in a separate 0600 file, never in the record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-record-'));
    const record = await openSecretsRecord(dir);
    record.remember(URL, 'eth1 inet', 'wpa_password', new Secret('guessable-Pass-1'));
    await record.save(URL);
    const text = readFileSync(join(dir, SECRETS_RECORD_FILE), 'utf8');
    const keyText = readFileSync(join(dir, SECRETS_RECORD_KEY_FILE), 'utf8').trim();
    expect(statSync(join(dir, SECRETS_RECORD_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(Buffer.from(keyText, 'base64')).toHaveLength(32);
    expect(text).not.toContain(keyText);
    expect(Object.keys(JSON.parse(text) as object)).toEqual(['version', 'devices']);

    // A correct guess cannot be confirmed with anything the record holds (nor with no key at all).
    const stored = (
      JSON.parse(text) as { devices: Record<string, { stanzas: Record<string, Record<string, string>> }> }
    ).devices[URL]?.stanzas['eth1 inet']?.wpa_password;
    expect(stored).toMatch(/^[0-9a-f]{64}$/);
    const candidates = [...stringsOf(JSON.parse(text)), ''];
    expect(candidates.length).toBeGreaterThan(1);
    const guess = new Secret('guessable-Pass-1');
    const confirmed = candidates.filter((k) =>
      [Buffer.from(k, 'base64'), Buffer.from(k)].some((key) => guess.keyedHash(key, CONTEXT) === stored),
    );
    expect(confirmed).toEqual([]);
    // With the key file it is confirmed: the hash really is of the guess.
    expect(guess.keyedHash(Buffer.from(keyText, 'base64'), CONTEXT)).toBe(stored);
  });

  it('migrates a first-format record: the key moves out, the hashes still match', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-record-'));
    const key = randomBytes(32);
    const hash = new Secret('old-Record-Pass-2').keyedHash(key, CONTEXT);
    const file = join(dir, SECRETS_RECORD_FILE);
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        key: key.toString('base64'),
        devices: { [URL]: { 'eth1 inet': { wpa_password: hash } } },
      }),
      { mode: 0o600 },
    );

    const record = await openSecretsRecord(dir);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(key.toString('base64'));
    expect(text).toContain(hash);
    expect(readFileSync(join(dir, SECRETS_RECORD_KEY_FILE), 'utf8').trim()).toBe(key.toString('base64'));
    expect(record.known(URL, 'eth1 inet', 'wpa_password', new Secret('old-Record-Pass-2'))).toBe(true);
    expect(
      (await openSecretsRecord(dir)).known(URL, 'eth1 inet', 'wpa_password', new Secret('old-Record-Pass-2')),
    ).toBe(true);
  });
});
