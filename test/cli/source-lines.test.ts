import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateOnTerminal } from '../support/run-cli.js';
import { leakedForms } from '../support/secret-forms.js';
import { profilesDir } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * `mpprov validate` on a real terminal (a pty from util-linux `script`) shows the source line under
 * each problem, but never one that shows a secret: not under a mistyped secret key (`pasword:`,
 * which "did you mean" ties to `password`), and not a line holding an escaped copy of a secret
 * (a double-quoted "\x48..." or "\u0048..." that YAML decodes to the password given elsewhere).
 * A harmless line under a problem is shown: the terminal path is really taken.
 */

const FINGERPRINT = `${'AB:'.repeat(31)}AB`;

async function validateConfigOnTerminal(config: string): Promise<string> {
  const dir = join(tempFolder('tty-stick'), 'stick');
  mkdirSync(dir);
  cpSync(join(profilesDir, 'secrets'), join(dir, 'secrets'), { recursive: true });
  writeFileSync(join(dir, 'mpprov.yaml'), config);
  return validateOnTerminal(dir);
}

const head = (extra: string): string =>
  `version: 1\nmonitoring_points:\n  - name: mp1\n    url: https://192.0.2.10\n    password_file: secrets/admin.pw\n    tls: { fingerprint_sha256: "${FINGERPRINT}" }\n${extra}`;

describe('source lines on a terminal', () => {
  it('a harmless line under a problem is shown, with its caret', { timeout: 30_000 }, async () => {
    const out = await validateConfigOnTerminal(head('    colour: blue\n'));
    expect(out).toContain("unknown key 'colour'");
    expect(out).toContain('    colour: blue');
  });

  it('not the line of a mistyped secret key (did-you-mean points at password)', { timeout: 30_000 }, async () => {
    const secret = 'Hunter-Secret-42';
    const out = await validateConfigOnTerminal(head(`    pasword: ${secret}\n    colour: blue\n`));
    expect(out).toContain("unknown key 'pasword'");
    expect(out).toContain("did you mean 'password'");
    expect(out).toContain('    colour: blue');
    expect(leakedForms(out, [secret])).toEqual([]);
  });

  it('not a line holding an escaped copy of a secret given elsewhere on the stick', { timeout: 30_000 }, async () => {
    const secret = 'Escaped-Secret-77';
    const config = [
      'version: 1',
      'monitoring_points:',
      '  - name: mp1',
      '    url: https://192.0.2.10',
      `    password: "${secret}"`,
      `    tls: { fingerprint_sha256: "${FINGERPRINT}" }`,
      '    interfaces:',
      '      eth1:',
      '        ipv4: { method: dhcp, descripton: "\\x45scaped-Secret-77" }',
      '        ipv6: { method: dhcp, notes: "\\u0045scaped-\\u0053ecret-77" }',
      '',
    ].join('\n');
    const out = await validateConfigOnTerminal(config);
    expect(out).toContain("unknown key 'descripton'");
    expect(out).toContain("unknown key 'notes'");
    // The escaped forms are secrets too: neither the value nor the line as written shows.
    expect(out).not.toContain('scaped-');
    expect(leakedForms(out, [secret])).toEqual([]);
  });
});
