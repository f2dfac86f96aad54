import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, validateOnTerminal } from '../support/run-cli.js';
import { leakedForms } from '../support/secret-forms.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * A key with a character drawn as nothing inside it (a zero-width space, a soft hyphen, a tag
 * character) reads as `password` to the person who wrote it; an unknown key named like a secret
 * (`pw:`, `admin_password:`, `api_token:`) holds one though no schema key is close. Either way
 * its value is withheld: no source line on a terminal, no trace in the JSON report.
 */

const ZWSP = 'pass\u200bword';
const SOFT_HYPHEN = 'pass\u00adword';
const TAG = 'pass\u{E0041}word';
const VARIATION = 'pass\ufe0fword';

function stick(config: string): string {
  const dir = join(tempFolder('invisible-key'), 'stick');
  mkdirSync(dir);
  writeFileSync(join(dir, 'mpprov.yaml'), config);
  return dir;
}

const point = (name: string, extra: string): string =>
  `  - name: ${name}\n    url: https://192.0.2.10\n    tls: { insecure: true }\n    colour: blue\n${extra}`;

describe('keys that hold a secret though the schema does not know them', () => {
  const invisible = [ZWSP, SOFT_HYPHEN, TAG, VARIATION];
  const named = ['pw', 'pass', 'admin_password', 'api_token', 'wifi_psk', 'client_secret', 'my_private_key'];
  const keys = [...invisible, ...named];
  const secrets = keys.map((_, index) => `Hidden-Secret-${index + 10}`);
  const config = [
    'version: 1\n',
    'monitoring_points:\n',
    ...keys.map((key, index) => point(`mp${index}`, `    ${key}: ${secrets[index]}\n`)),
    // Flow style too: the value ends at the next key.
    point('flow', `    extra: { ${ZWSP}: Hidden-Flow-Secret-99, note: plain }\n`),
    // A known key that names a file holds no secret: its line stays visible.
    point('file', '    password_file: secrets/missing.pw\n'),
  ].join('');
  const allSecrets = [...secrets, 'Hidden-Flow-Secret-99'];

  it('on a terminal: each unknown key is said, the line with its value is not shown', { timeout: 30_000 }, async () => {
    const out = await validateOnTerminal(stick(config));
    expect(out).toContain('INVALID');
    // The invisible characters are shown escaped, and "did you mean" reads through them.
    expect(out.match(/did you mean 'password'\?/g)?.length).toBeGreaterThanOrEqual(invisible.length);
    for (const key of named) expect(out).toContain(`unknown key '${key}'`);
    // The terminal path is really taken: a harmless line under its problem is shown.
    expect(out).toContain('    colour: blue');
    expect(out).toContain('    password_file: secrets/missing.pw');
    expect(leakedForms(out, allSecrets)).toEqual([]);
  });

  it(
    'in the JSON report: a value YAML breaks apart after such a key is not quoted back',
    { timeout: 30_000 },
    async () => {
      // `key: Secret: x` is a nested map where none may be: the parser and the key paths would quote `Secret`.
      const broken = keys.map((key, index) =>
        stick(['version: 1', 'monitoring_points:', point('mp1', `    ${key}: ${secrets[index]}: x\n`)].join('\n')),
      );
      const runs = await Promise.all(broken.map((dir) => runCli(['validate', '--json', dir])));
      expect(runs).toHaveLength(keys.length);
      for (const [index, json] of runs.entries()) {
        const report = JSON.parse(json.stdout) as { valid: boolean; problems: { path: string }[] };
        expect(report.valid).toBe(false);
        expect(report.problems.map((p) => p.path)).toContain(`monitoring_points[0].${keys[index]}`);
        expect(leakedForms(json.stdout + json.stderr, allSecrets)).toEqual([]);
      }
    },
  );
});
