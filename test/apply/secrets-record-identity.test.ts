import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSecretsRecord, SECRETS_RECORD_FILE, SECRETS_RECORD_KEY_FILE } from '../../src/apply/index.js';
import { resolveDeviceIdentity } from '../../src/client/index.js';
import { Secret } from '../../src/config/index.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig, testAgentConfig } from '../support/stick-workspace.js';
import { applyFile } from './apply-helpers.js';

/**
 * The secrets record knows a device by its identity, not by how a stick spells its URL:
 * https://localhost:P, https://127.0.0.1:P and https://[::ffff:127.0.0.1]:P are one entry.
 */

const STANZA = 'eth1 inet';
const FIELD = 'wpa_password';
const stored = (dir: string) =>
  JSON.parse(readFileSync(join(dir, SECRETS_RECORD_FILE), 'utf8')) as {
    devices: Record<string, { stanzas: Record<string, Record<string, string>> }>;
  };

describe('the secrets record keyed by device', () => {
  it('a password set through one spelling is what every other spelling compares with', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-record-'));
    const [literal, byName, mapped] = await Promise.all(
      ['https://127.0.0.1:8443', 'https://localhost:8443', 'https://[::ffff:127.0.0.1]:8443'].map(
        resolveDeviceIdentity,
      ),
    );
    if (literal === undefined || byName === undefined || mapped === undefined) throw new Error('no identities');
    const record = await openSecretsRecord(dir);
    record.remember(literal, STANZA, FIELD, new Secret('Pass-Set-By-B'));
    record.remember(byName, STANZA, FIELD, new Secret('Pass-Set-By-A'));
    await record.save(byName);
    const again = await openSecretsRecord(dir);
    expect(again.known(literal, STANZA, FIELD, new Secret('Pass-Set-By-B'))).toBe(false);
    expect(again.known(literal, STANZA, FIELD, new Secret('Pass-Set-By-A'))).toBe(true);
    expect(again.known(mapped, STANZA, FIELD, new Secret('Pass-Set-By-A'))).toBe(true);
    expect(Object.keys(stored(dir).devices)).toEqual(['https://127.0.0.1:8443']);
  });

  it('finds an entry written under a host name before, and moves it to the device key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-record-'));
    const key = randomBytes(32);
    writeFileSync(join(dir, SECRETS_RECORD_KEY_FILE), `${key.toString('base64')}\n`, { mode: 0o600 });
    const old = 'https://localhost:8443';
    const hash = new Secret('Old-Record-Pass-5').keyedHash(key, [old, STANZA, FIELD]);
    writeFileSync(
      join(dir, SECRETS_RECORD_FILE),
      JSON.stringify({ version: 2, devices: { [old]: { [STANZA]: { [FIELD]: hash } } } }),
    );

    const device = await resolveDeviceIdentity('https://127.0.0.1:8443');
    const record = await openSecretsRecord(dir);
    expect(record.known(device, STANZA, FIELD, new Secret('Old-Record-Pass-5'))).toBe(true);
    expect(record.known(device, STANZA, FIELD, new Secret('another'))).toBe(false);
    await record.save(device);
    expect(Object.keys(stored(dir).devices)).toEqual(['https://127.0.0.1:8443']);
    const reopened = await openSecretsRecord(dir);
    expect(reopened.known(device, STANZA, FIELD, new Secret('Old-Record-Pass-5'))).toBe(true);
    expect(reopened.known(await resolveDeviceIdentity(old), STANZA, FIELD, new Secret('Old-Record-Pass-5'))).toBe(true);
  });

  it('two old entries for one device (two spellings) cannot both be right: its secrets count as changed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-record-'));
    const key = randomBytes(32);
    writeFileSync(join(dir, SECRETS_RECORD_KEY_FILE), `${key.toString('base64')}\n`, { mode: 0o600 });
    const entry = (url: string, pass: string) => ({
      [STANZA]: { [FIELD]: new Secret(pass).keyedHash(key, [url, STANZA, FIELD]) },
    });
    const devices = {
      'https://127.0.0.1:8443': entry('https://127.0.0.1:8443', 'Stale-Pass-B'),
      'https://localhost:8443': entry('https://localhost:8443', 'Newer-Pass-A'),
      'https://192.0.2.10': entry('https://192.0.2.10', 'Other-Device-Pass'),
    };
    writeFileSync(join(dir, SECRETS_RECORD_FILE), JSON.stringify({ version: 2, devices }));
    const device = await resolveDeviceIdentity('https://127.0.0.1:8443');
    const record = await openSecretsRecord(dir);
    expect(record.known(device, STANZA, FIELD, new Secret('Stale-Pass-B'))).toBe(false);
    expect(record.known(device, STANZA, FIELD, new Secret('Newer-Pass-A'))).toBe(false);
    expect(record.known('https://192.0.2.10', STANZA, FIELD, new Secret('Other-Device-Pass'))).toBe(true);
    record.remember(device, STANZA, FIELD, new Secret('Newer-Pass-A'));
    await record.save(device);
    expect(Object.keys(stored(dir).devices).sort()).toEqual(['https://127.0.0.1:8443', 'https://192.0.2.10']);
  });
});

describe('mpprov apply: one device, two spellings, one secrets record', () => {
  const simulators = useSimulators(PROFILE_DEVICE);
  const eth1 = (password: string) => `    interfaces:
      eth1:
        ipv4: { method: static, address: 192.0.2.20/24, gateway: 192.0.2.1 }
        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${password}", ca_cert: certs/radius-ca.pem }
`;

  it(
    'a password set through localhost is not taken for the one 127.0.0.1 set before',
    { timeout: 60_000 },
    async () => {
      const device = await simulators.start();
      const byName = device.url.replace('127.0.0.1', 'localhost');
      const agent = testAgentConfig();
      const apply = async (url: string, password: string) => {
        const { result } = await applyFile(
          stickWithConfig(stickHead(device, eth1(password)).replace(device.url, url)),
          {
            agent,
          },
        );
        return result.devices[0];
      };
      expect((await apply(device.url, 'Peap-Pass-B-1'))?.outcome).toBe('changed');
      expect((await apply(byName, 'Peap-Pass-A-2'))?.outcome).toBe('changed');
      // The device holds A now: the stick spelt 127.0.0.1 with B must send B again.
      const third = await apply(device.url, 'Peap-Pass-B-1');
      expect(third?.outcome, third?.message).toBe('changed');
      expect((await apply(byName, 'Peap-Pass-B-1'))?.outcome).toBe('no-change');
    },
  );
});
