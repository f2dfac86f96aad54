import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSecretsRecord } from '../../src/apply/index.js';
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

  it('two jobs saving at the same moment keep each other\'s devices', async () => {
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
    const devices = Object.keys((JSON.parse(readFileSync(join(dir, 'secrets-record.json'), 'utf8')) as { devices: object }).devices);
    expect(devices).toHaveLength(40);
  });
});
