import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatKeyPath, loadStick, type Problem } from '../../src/config/index.js';

/** Files named by the configuration: containment, size caps and secret files, on a real folder. */

function stickDir(config: string, files: Record<string, string | Buffer> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'mpprov-stick-'));
  writeFileSync(join(dir, 'mpprov.yaml'), config);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return dir;
}

const base = (extra: string) => `version: 1
monitoring_points:
  - name: mp1
    url: https://192.0.2.10
${extra}`;

const errorsOf = (problems: Problem[]) =>
  problems.filter((p) => p.severity === 'error').map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`);

describe('files named by the configuration', () => {
  it('reads a password file and drops its one trailing newline', async () => {
    const dir = stickDir(base('    password_file: secrets/admin.pw\n'), { 'secrets/admin.pw': 'file-SeCrEt-1\n' });
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    expect(errorsOf(loaded.problems)).toEqual([]);
    // The file's secret sits in the model at the inline key, a Secret like an inline one.
    const password = loaded.model?.monitoring_points[0]?.password;
    expect(password?.satisfies((value) => value === 'file-SeCrEt-1')).toBe(true);
    expect(JSON.stringify(password)).toBe('"(secret)"');
    expect(loaded.secrets).toHaveLength(1);
  });

  it('refuses an empty secret file', async () => {
    const dir = stickDir(base('    password_file: admin.pw\n'), { 'admin.pw': '\n' });
    const loaded = await loadStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    expect(errorsOf(loaded.problems)).toEqual([
      "5:20 monitoring_points[0].password_file secret file 'admin.pw' is empty",
    ]);
  });

  it('refuses a secret file that is not UTF-8 (its letters would reach the device changed), and drops a BOM', async () => {
    const latin1 = stickDir(base('    password_file: admin.pw\n'), {
      'admin.pw': Buffer.from('Gr\u00fcn-SeCrEt-1\n', 'latin1'),
    });
    const refused = await loadStick(join(latin1, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    expect(errorsOf(refused.problems)).toEqual([
      "5:20 monitoring_points[0].password_file secret file 'admin.pw' is not UTF-8 text (a byte such as Latin-1's): its password would reach the device with other letters",
    ]);
    expect(refused.problems[0]?.hint).toBe('save it as UTF-8');
    expect(JSON.stringify(refused.problems)).not.toContain('SeCrEt');
    const bom = stickDir(base('    password_file: admin.pw\n'), { 'admin.pw': '\ufeffGr\u00fcn-SeCrEt-1\r\n' });
    const read = await loadStick(join(bom, 'mpprov.yaml'));
    expect(errorsOf(read.problems)).toEqual([]);
    expect(read.model?.monitoring_points[0]?.password?.satisfies((value) => value === 'Gr\u00fcn-SeCrEt-1')).toBe(true);
  });

  it('checks a passphrase read from a file like an inline one, without quoting it', async () => {
    const config = `${base('    interfaces:\n')}      wlan0:\n        wireless: { ssid: Corp, security: wpa2-personal, passphrase_file: wifi.txt }\n        ipv4: { method: dhcp }\n`;
    const dir = stickDir(config, { 'wifi.txt': 'shortSe\n' });
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    expect(errorsOf(loaded.problems)).toEqual([
      "7:75 monitoring_points[0].interfaces.wlan0.wireless.passphrase_file passphrase in 'wifi.txt' must be 8 to 63 printable ASCII characters, or 64 hex digits",
    ]);
    expect(JSON.stringify(loaded.problems)).not.toContain('shortSe');
  });

  it('refuses a symlink that leads outside the configuration folder', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'mpprov-outside-'));
    writeFileSync(join(outside, 'shadow'), 'not for the stick');
    const dir = stickDir(base('    password_file: link.pw\n'));
    symlinkSync(join(outside, 'shadow'), join(dir, 'link.pw'));
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    expect(errorsOf(loaded.problems)).toEqual([
      "5:20 monitoring_points[0].password_file 'link.pw' is a link that leads outside the configuration's folder",
    ]);
  });

  it('follows a symlink that stays inside the folder', async () => {
    const dir = stickDir(base('    password_file: link.pw\n'), { 'real/admin.pw': 'inside-pw' });
    symlinkSync('real/admin.pw', join(dir, 'link.pw'));
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    expect(errorsOf(loaded.problems)).toEqual([]);
  });

  it('refuses a referenced file over 1 MiB', async () => {
    const config = `${base('    interfaces:\n')}      eth0:\n        ipv4: { method: dhcp }\n        dot1x: { eap: tls, identity: mp01, ca_cert: big.pem, private_key: big.pem }\n`;
    const dir = stickDir(config, { 'big.pem': Buffer.alloc(1024 * 1024 + 1, 0x41) });
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    expect(errorsOf(loaded.problems)).toEqual([
      "8:53 monitoring_points[0].interfaces.eth0.dot1x.ca_cert file 'big.pem' is 1048577 bytes; the limit is 1 MiB",
      "8:75 monitoring_points[0].interfaces.eth0.dot1x.private_key file 'big.pem' is 1048577 bytes; the limit is 1 MiB",
    ]);
  });

  it('refuses a configuration file over 256 KiB before parsing it', async () => {
    const dir = stickDir(`${base('')}${'# padding\n'.repeat(27000)}`);
    const loaded = await loadStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    expect(loaded.model).toBeUndefined();
    expect(errorsOf(loaded.problems)).toEqual(['1:1  the configuration file is 270072 bytes; the limit is 256 KiB']);
  });

  it('reports a missing configuration file as a problem, not a crash', async () => {
    const loaded = await loadStick('/nonexistent/mpprov.yaml', { label: 'mpprov.yaml' });
    expect(errorsOf(loaded.problems)).toEqual(['1:1  the configuration file does not exist']);
  });

  it('keeps every referenced certificate in memory with its hash', async () => {
    const config = `${base('    interfaces:\n')}      eth0:\n        ipv4: { method: dhcp }\n        dot1x: { eap: tls, identity: mp01, ca_cert: certs/ca.pem, private_key: certs/k.pem }\n`;
    const dir = stickDir(config, { 'certs/ca.pem': 'ca-bytes', 'certs/k.pem': 'key-bytes' });
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    const ca = loaded.files.get(formatKeyPath(['monitoring_points', 0, 'interfaces', 'eth0', 'dot1x', 'ca_cert']));
    expect(ca?.bytes.toString()).toBe('ca-bytes');
    expect(ca?.sha256).toBe(createHash('sha256').update('ca-bytes').digest('hex'));
    expect(ca?.name).toBe('certs/ca.pem');
  });
});
