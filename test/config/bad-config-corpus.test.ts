import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStick, type Problem } from '../../src/config/index.js';
import { formatProblem } from '../../src/report/index.js';

/**
 * Every file in test/fixtures/config/bad carries its expected problems as comments:
 *   # expect: LINE:COL key.path | message || hint
 *   # expect-warning: ...
 * The loader must report exactly those errors (and at least those warnings), at those positions.
 */
const dir = new URL('../fixtures/config/bad/', import.meta.url).pathname;
const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const EXPECT = /^# (expect|expect-warning): (\d+):(\d+) (.*?) \| (.*?)(?: \|\| (.*))?$/;

interface Expected {
  severity: string;
  line: number;
  column: number;
  path: string;
  message: string;
  hint: string | undefined;
}

function expectationsOf(text: string): Expected[] {
  return text.split('\n').flatMap((line) => {
    const m = EXPECT.exec(line);
    if (m === null) return [];
    return [
      {
        severity: m[1] === 'expect' ? 'error' : 'warning',
        line: Number(m[2]),
        column: Number(m[3]),
        path: m[4] ?? '',
        message: m[5] ?? '',
        hint: m[6],
      },
    ];
  });
}

const summary = (p: Problem | Expected) => ({
  severity: p.severity,
  line: p.line,
  column: p.column,
  path: p.path,
  message: p.message,
  hint: p.hint,
});

/** Secret values in a fixture: anything given to a password, passphrase or key password key. */
function secretValuesOf(text: string): string[] {
  return [...text.matchAll(/(?:password|passphrase|private_key_password):\s*"([^"]+)"/g)]
    .map((m) => m[1] ?? '')
    .filter((v) => v !== '');
}

describe('bad configuration corpus', () => {
  it('holds at least 40 cases', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(40);
  });

  it('holds cases with secrets and with warnings, so the searches below are not vacuous', () => {
    const texts = fixtures.map((f) => readFileSync(join(dir, f), 'utf8'));
    expect(texts.filter((t) => secretValuesOf(t).length > 0).length).toBeGreaterThan(0);
    expect(texts.filter((t) => expectationsOf(t).some((e) => e.severity === 'warning')).length).toBeGreaterThan(0);
  });

  for (const fixture of fixtures) {
    it(fixture, async () => {
      const text = readFileSync(join(dir, fixture), 'utf8');
      const expected = expectationsOf(text);
      expect(
        expected.filter((e) => e.severity === 'error').length,
        'the fixture names at least one error',
      ).toBeGreaterThan(0);

      const loaded = await loadStick(join(dir, fixture), { label: fixture });
      const errors = loaded.problems.filter((p) => p.severity === 'error').map(summary);
      const warnings = loaded.problems.filter((p) => p.severity === 'warning').map(summary);
      expect(errors).toEqual(expected.filter((e) => e.severity === 'error').map(summary));
      for (const warning of expected.filter((e) => e.severity === 'warning'))
        expect(warnings).toContainEqual(summary(warning));
      for (const p of loaded.problems) expect(p.file).toBe(fixture);

      const rendered =
        loaded.problems.map((p) => formatProblem(p, loaded)).join('\n') + JSON.stringify(loaded.problems);
      for (const secret of secretValuesOf(text)) expect(rendered).not.toContain(secret);
    });
  }
});
