import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStick, type LoadedStick } from '../../src/config/index.js';

/**
 * Broken YAML around a secret: problems found inside what was written as a secret become one
 * sentence about that secret, by position (no word of it is looked for), and no source line
 * that holds any part of a secret is given to show under a problem.
 */
async function load(extra: string): Promise<LoadedStick> {
  const dir = mkdtempSync(join(tmpdir(), 'mpprov-spans-'));
  writeFileSync(
    join(dir, 'mpprov.yaml'),
    `version: 1\nmonitoring_points:\n  - name: mp1\n    url: https://192.0.2.10\n${extra}`,
  );
  return loadStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
}

const masked = (path: string, key: string) => ({
  path,
  message: `YAML reads part of this ${key} as syntax, so it is not one text value`,
  hint: `put the whole ${key} in single quotes ('...'), doubling any ' inside it`,
});

describe('a secret that YAML does not read as one value', () => {
  it('an unquoted ", " in a flow map: the rest is not reported as an unknown key', async () => {
    const loaded = await load(
      '    interfaces:\n      wlan0:\n        wireless: { ssid: X, security: wpa2-personal, passphrase: Leak1,Secret98 }\n        ipv4: { method: dhcp }\n',
    );
    expect(loaded.problems).toEqual([
      {
        severity: 'error',
        file: 'mpprov.yaml',
        line: 7,
        column: 66,
        ...masked('monitoring_points[0].interfaces.wlan0.wireless.passphrase', 'passphrase'),
      },
    ]);
  });

  it('": " inside an unquoted password: the parser is not quoted', async () => {
    const loaded = await load('    password: Leak2: Secret99\n');
    expect(loaded.problems).toEqual([
      {
        severity: 'error',
        file: 'mpprov.yaml',
        line: 5,
        column: 14,
        ...masked('monitoring_points[0].password', 'password'),
      },
    ]);
  });

  it('our own sentence about the secret key itself stays as it is', async () => {
    const loaded = await load(
      '    interfaces:\n      wlan0:\n        wireless: { ssid: X, security: wpa2-personal, passphrase: "short" }\n        ipv4: { method: dhcp }\n',
    );
    expect(loaded.problems.map((p) => [p.path, p.message])).toEqual([
      [
        'monitoring_points[0].interfaces.wlan0.wireless.passphrase',
        'passphrase must be 8 to 63 printable ASCII characters, or 64 hex digits',
      ],
    ]);
  });
});

describe('source lines shown under problems', () => {
  it('never a line holding a secret, credentials in a URL, or a secret value under another key', async () => {
    const loaded = await load(
      [
        '    username: same-as-secret-1',
        '    password: "same-as-secret-1"',
        '    interfaces:',
        '      eth0:',
        '        ipv4: { method: dhcp }',
        '        dot1x: { eap: md5, identity: x, password_file: pw.txt }',
        '# see https://admin:hunter22@192.0.2.10 for the old one',
        '',
      ].join('\n'),
    );
    expect([4, 5, 6, 7, 8, 9, 10, 11].map((n) => loaded.sourceLine(n))).toEqual([
      '    url: https://192.0.2.10',
      undefined,
      undefined,
      '    interfaces:',
      '      eth0:',
      '        ipv4: { method: dhcp }',
      '        dot1x: { eap: md5, identity: x, password_file: pw.txt }',
      undefined,
    ]);
  });
});

describe('a secret too short to keep out of logs', () => {
  it('is a warning at its key, inline or from a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-spans-'));
    writeFileSync(join(dir, 'pw.txt'), 'ab\n');
    writeFileSync(
      join(dir, 'mpprov.yaml'),
      'version: 1\nmonitoring_points:\n  - name: mp1\n    url: https://192.0.2.10\n    password: "xyz"\n    interfaces:\n      eth0:\n        ipv4: { method: dhcp }\n        dot1x: { eap: md5, identity: x, password_file: pw.txt }\n',
    );
    const loaded = await loadStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    expect(loaded.problems.map((p) => `${p.line}:${p.column} ${p.severity} ${p.path} ${p.message}`)).toEqual([
      '5:15 warning monitoring_points[0].password this password is shorter than 4 characters: too short to tell apart from ordinary text, so mpprov cannot keep it out of logs',
      '9:56 warning monitoring_points[0].interfaces.eth0.dot1x.password_file this password is shorter than 4 characters: too short to tell apart from ordinary text, so mpprov cannot keep it out of logs',
    ]);
    expect(loaded.model).toBeDefined();
  });
});
