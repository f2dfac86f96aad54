import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStick } from '../../src/config/index.js';
import { formatProblem } from '../../src/report/index.js';

/** Broken YAML around a secret must not make any problem quote a piece of it. */
const cases: [string, string, string[]][] = [
  [
    'an unquoted comma inside a flow-map passphrase',
    '    interfaces:\n      wlan0:\n        wireless: { ssid: X, security: wpa2-personal, passphrase: Leak1,Secret98 }\n        ipv4: { method: dhcp }\n',
    ['Leak1', 'Secret98'],
  ],
  ['a colon inside an unquoted password', '    password: Leak2: Secret99\n', ['Leak2', 'Secret99']],
  [
    'a password wrapped onto the next line',
    '    password: Leak3\n      SecretWrapped\n    prune: maybe\n',
    ['Leak3', 'SecretWrapped'],
  ],
  ['a URL that does not parse, with credentials', '', ['UrlSecret77']],
];

describe('no secret in problems about broken YAML', () => {
  for (const [what, extra, secrets] of cases) {
    it(what, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mpprov-leak-'));
      const url = what.startsWith('a URL') ? 'https://admin:UrlSecret77@192.0.2.10:99999' : 'https://192.0.2.10';
      writeFileSync(
        join(dir, 'mpprov.yaml'),
        `version: 1\nmonitoring_points:\n  - name: mp1\n    url: ${url}\n${extra}`,
      );
      const loaded = await loadStick(join(dir, 'mpprov.yaml'));
      expect(loaded.problems.filter((p) => p.severity === 'error').length).toBeGreaterThan(0);
      const shown = loaded.problems.map((p) => formatProblem(p)).join('\n') + JSON.stringify(loaded.problems);
      for (const secret of secrets) expect(shown).not.toContain(secret);
    });
  }

  it('reports rule problems beside schema problems: one typo does not hide the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-all-'));
    writeFileSync(
      join(dir, 'mpprov.yaml'),
      'version: 1\nmonitoring_points:\n  - name: mp1\n    url: http://192.0.2.10\n    interfaces:\n      eth0:\n        link: { mtu: 20000 }\n        ipv4: { method: dhcp }\n      eth1:\n        ipv4: { method: static, address: 192.0.2.10/24, gateway: 192.0.3.1 }\n    acl:\n      - { protocol: tcp, ports: "90-80", sources: [10.0.0.0/8], interfaces: [eth0] }\n',
    );
    const loaded = await loadStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    expect(loaded.model).toBeUndefined();
    expect(loaded.problems.map((p) => `${p.line}:${p.column} ${p.path}`)).toEqual([
      '4:10 monitoring_points[0].url',
      '7:22 monitoring_points[0].interfaces.eth0.link.mtu',
      '10:66 monitoring_points[0].interfaces.eth1.ipv4.gateway',
      '12:33 monitoring_points[0].acl[0].ports',
    ]);
  });
});
