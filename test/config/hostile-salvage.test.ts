import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStick } from '../../src/config/index.js';
import { tempFolder } from '../support/temp-folder.js';

/** A value the schema refuses still counts as written for the rules that only ask whether it is there. */
describe('a refused value and a rule about the same key', () => {
  it('says a passphrase_file of the wrong type on an open network both ways, once each', async () => {
    const dir = tempFolder('salvage-open');
    writeFileSync(
      join(dir, 'mpprov.yaml'),
      `version: 1
monitoring_points:
  - name: a
    url: https://192.0.2.1
    tls: { fingerprint_sha256: "${'5E'.repeat(32)}" }
    password: Admin-Pw-1
    interfaces:
      wlan0:
        wireless: { ssid: x, security: open, passphrase_file: 5 }
        ipv4: { method: dhcp }
`,
    );
    const loaded = await loadStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    expect(loaded.problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      "9:46 monitoring_points[0].interfaces.wlan0.wireless.passphrase_file 'passphrase_file' belongs to wpa2-personal only",
      '9:63 monitoring_points[0].interfaces.wlan0.wireless.passphrase_file must be text, not a whole number',
    ]);
  });
  it('says a key that does not fit its block also when its value is of the wrong type', async () => {
    const dir = tempFolder('salvage-fit');
    writeFileSync(
      join(dir, 'mpprov.yaml'),
      `version: 1
monitoring_points:
  - name: a
    url: https://192.0.2.1
    tls: { fingerprint_sha256: "${'5E'.repeat(32)}" }
    password: Admin-Pw-1
    interfaces:
      eth0.10:
        vlan: { id: 10, link: eth0 }
        link: { speed: fast }
        ipv4: { method: dhcp, address: 5 }
      wlan0:
        wireless: { ssid: x, security: open }
        dot1x: 5
        ipv4: { method: dhcp }
`,
    );
    const loaded = await loadStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    expect(loaded.problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      "10:17 monitoring_points[0].interfaces.eth0.10.link.speed 'speed' does not fit a VLAN interface",
      '10:24 monitoring_points[0].interfaces.eth0.10.link.speed must be a number, not text',
      "11:31 monitoring_points[0].interfaces.eth0.10.ipv4.address 'address' does not fit method dhcp",
      '11:40 monitoring_points[0].interfaces.eth0.10.ipv4.address must be text, not a whole number',
      '14:9 monitoring_points[0].interfaces.wlan0.dot1x 802.1X on a wireless interface needs security: wpa2-enterprise, not open',
      '14:16 monitoring_points[0].interfaces.wlan0.dot1x must be a block of keys, not a whole number',
    ]);
  });
  it('says a key that does not fit the EAP method also when its value is of the wrong type', async () => {
    const dir = tempFolder('salvage-eap');
    writeFileSync(
      join(dir, 'mpprov.yaml'),
      `version: 1
monitoring_points:
  - name: a
    url: https://192.0.2.1
    tls: { fingerprint_sha256: "${'5E'.repeat(32)}" }
    password: Admin-Pw-1
    interfaces:
      eth1:
        ipv4: { method: dhcp }
        dot1x: { eap: md5, identity: mp, password: Dot1x-Pw-1, ca_cert: [ca.pem] }
`,
    );
    const loaded = await loadStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    expect(loaded.problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      "10:64 monitoring_points[0].interfaces.eth1.dot1x.ca_cert 'ca_cert' does not fit EAP-MD5",
      '10:73 monitoring_points[0].interfaces.eth1.dot1x.ca_cert must be text, not a list',
    ]);
  });
});
