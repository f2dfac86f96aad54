import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStick } from '../../src/config/index.js';
import { referencedFiles } from '../../src/signature/index.js';

/**
 * What `mpprov sign` lists must be what the agent reads: a file the loader reads but the list
 * leaves out would be used unsigned. The loader itself is the judge: with none of the files
 * present, every file it tries to read is a "does not exist" problem naming it.
 */
const EVERY_FILE_KEY = `version: 1
monitoring_points:
  - name: mp1
    url: https://192.0.2.10
    password_file: f/mp-password
    tls: { ca: f/device-ca }
    interfaces:
      eth1:
        ipv4: { method: dhcp }
        dot1x:
          eap: peap
          inner: tls
          identity: x
          ca_cert: f/radius-ca
          inner_tls: { ca_cert: f/inner-ca, client_cert: f/inner-cert, private_key: f/inner-key, private_key_password_file: f/inner-key-pw }
      eth2:
        ipv4: { method: dhcp }
        dot1x: { eap: tls, identity: y, ca_cert: f/ca2, client_cert: f/cert2, private_key: f/key2, private_key_password_file: f/key2-pw }
      eth3:
        ipv4: { method: dhcp }
        dot1x: { eap: md5, identity: z, password_file: ./f/md5-password }
      wlan0:
        ipv4: { method: dhcp }
        wireless: { ssid: x, security: wpa2-personal, passphrase_file: f/wifi-pass }
`;

describe('referencedFiles', () => {
  it('names exactly the files the configuration loader reads', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-refs-'));
    try {
      writeFileSync(join(dir, 'mpprov.yaml'), EVERY_FILE_KEY);
      const loaded = await loadStick(join(dir, 'mpprov.yaml'));
      expect(loaded.model).toBeDefined();
      const missing = loaded.problems
        .map((p) => /^file '(.+)' does not exist$/.exec(p.message)?.[1])
        .filter((name) => name !== undefined);
      expect(missing).toHaveLength(13);
      expect(referencedFiles(loaded.model).sort()).toEqual([...new Set(missing)].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ignores strings under other keys and keys that hold no string', () => {
    expect(
      referencedFiles({
        name: 'ca_cert',
        password_file: { nested: 'x' },
        tls: { fingerprint_sha256: 'ab' },
        ca: 'not-under-tls',
        list: [{ private_key: 'k.pem' }],
      }),
    ).toEqual(['k.pem']);
  });
});
