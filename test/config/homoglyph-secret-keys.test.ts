import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, validateOnTerminal } from '../support/run-cli.js';
import { leakedForms } from '../support/secret-forms.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * A key written with look-alike letters (`pаsswоrd` with a Cyrillic а and о, a full-width
 * `ｐassword`) is an unknown key that "did you mean" ties to `password`: what follows it was meant
 * as a password, so it is withheld like one, in the source line under a problem on a terminal
 * and in the JSON report alike.
 */

const CYRILLIC = 'p\u0430ssw\u043erd';
const FULLWIDTH = '\uff50assword';
const GREEK_KEY_PASSWORD = 'private_key_pass\u03c9ord';

function stick(config: string): string {
  const dir = join(tempFolder('homoglyph'), 'stick');
  mkdirSync(dir);
  writeFileSync(join(dir, 'mpprov.yaml'), config);
  return dir;
}

const point = (name: string, extra: string): string =>
  `  - name: ${name}\n    url: https://192.0.2.10\n    tls: { insecure: true }\n${extra}`;

describe('keys with look-alike letters that read as a secret key', () => {
  const secrets = ['Homoglyph-Secret-1', 'Fullwidth-Secret-2', 'Dot1x-Homoglyph-3'];
  const config = [
    'version: 1\n',
    'monitoring_points:\n',
    point('mp1', `    ${CYRILLIC}: ${secrets[0]}\n`),
    point('mp2', `    ${FULLWIDTH}: "${secrets[1]}"\n    colour: blue\n`),
    point(
      'mp3',
      [
        '    interfaces:',
        '      eth1:',
        '        ipv4: { method: dhcp }',
        '        dot1x:',
        '          eap: tls',
        '          identity: mp3',
        '          private_key: key.pem',
        `          ${GREEK_KEY_PASSWORD}: ${secrets[2]}`,
        '',
      ].join('\n'),
    ),
  ].join('');

  it('on a terminal: the unknown key is said, its line is not shown', { timeout: 30_000 }, async () => {
    const out = await validateOnTerminal(stick(config));
    expect(out).toContain(`unknown key '${CYRILLIC}'`);
    expect(out).toContain(`unknown key '${FULLWIDTH}'`);
    expect(out).toContain(`unknown key '${GREEK_KEY_PASSWORD}'`);
    expect(out).toContain("did you mean 'password'?");
    expect(out).toContain("did you mean 'private_key_password'?");
    // The terminal path is really taken: a harmless line under its problem is shown.
    expect(out).toContain('    colour: blue');
    expect(leakedForms(out, secrets)).toEqual([]);
    const json = await runCli(['validate', '--json', stick(config)]);
    const report = JSON.parse(json.stdout) as { problems: { path: string }[] };
    expect(report.problems.map((p) => p.path)).toContain(`monitoring_points[0].${CYRILLIC}`);
    expect(leakedForms(json.stdout + json.stderr, secrets)).toEqual([]);
  });

  it('a value YAML breaks apart after such a key is not quoted back as a key path', { timeout: 30_000 }, async () => {
    const secret = 'Nested-Secret-5';
    const dir = stick(['version: 1', 'monitoring_points:', point('mp1', `    ${CYRILLIC}: ${secret}: x\n`)].join('\n'));
    const json = await runCli(['validate', '--json', dir]);
    const report = JSON.parse(json.stdout) as { valid: boolean; problems: { path: string }[] };
    expect(report.valid).toBe(false);
    expect(report.problems.map((p) => p.path)).toContain(`monitoring_points[0].${CYRILLIC}`);
    expect(leakedForms(json.stdout + json.stderr, [secret])).toEqual([]);
    expect(leakedForms(await validateOnTerminal(dir), [secret])).toEqual([]);
  });

  it('a value after such a key that YAML reads as an alias is not quoted back', { timeout: 30_000 }, async () => {
    const secret = 'Alias-Looking-Secret-4';
    const dir = stick(['version: 1', 'monitoring_points:', point('mp1', `    ${FULLWIDTH}: *${secret}\n`)].join('\n'));
    const json = await runCli(['validate', '--json', dir]);
    const report = JSON.parse(json.stdout) as { valid: boolean; problems: { path: string; line: number }[] };
    expect(report.valid).toBe(false);
    expect(report.problems.map((p) => `${p.line} ${p.path}`)).toEqual([`6 monitoring_points[0].${FULLWIDTH}`]);
    expect(leakedForms(json.stdout + json.stderr, [secret])).toEqual([]);
    const out = await validateOnTerminal(dir);
    expect(out).toContain('INVALID');
    expect(leakedForms(out, [secret])).toEqual([]);
  });
});
