import { expect } from 'vitest';
import type { Problem } from '../../src/config/index.js';
import { type ProblemSource, formatProblem } from '../../src/report/index.js';
import { secretForms } from '../support/secret-forms.js';

/**
 * What every fuzz property asks of a loader's problems: each located (the file as labelled, a
 * line inside the file, a column, a key path string, a sentence, a hint for a YAML syntax error), and none, as the CLI
 * prints it (text with its source line, and --json), quoting any form of a secret.
 */
export function expectLocated(problems: readonly Problem[], file: string, lineCount: number): void {
  for (const p of problems) {
    const where = `${p.file}:${p.line}:${p.column} ${p.path} ${p.message}`;
    expect(p.file, where).toBe(file);
    expect(
      Number.isInteger(p.line) && p.line >= 1 && p.line <= lineCount + 1,
      `line of ${where} (file has ${lineCount} lines)`,
    ).toBe(true);
    expect(Number.isInteger(p.column) && p.column >= 1, `column of ${where}`).toBe(true);
    expect(typeof p.path, where).toBe('string');
    expect(p.message.trim().length, `message of ${where}`).toBeGreaterThan(0);
    // Every YAML syntax problem says what to look for. Schema and rule problems carry a hint where
    // the sentence alone does not say the fix ("is not one of: dhcp, static" needs none).
    if (p.message.startsWith('YAML syntax'))
      expect((p.hint ?? '').trim().length, `hint of ${where}`).toBeGreaterThan(0);
  }
}

/** The problems as `mpprov validate` shows them on a terminal and as --json: the texts a secret must not reach. */
export function printedProblems(problems: readonly Problem[], source?: ProblemSource): string {
  return `${problems.map((p) => formatProblem(p, source)).join('\n')}\n${JSON.stringify(problems)}`;
}

/** Fails naming the secret and the form that leaked (a form, not the secret's value, goes in the message). */
export function expectNoSecret(printed: string, secrets: readonly string[]): void {
  for (const secret of secrets) {
    const leaked = secretForms(secret).filter((form) => printed.includes(form));
    expect(
      leaked.map((f) => `form #${secretForms(secret).indexOf(f)} of the secret of length ${secret.length}`),
      printed.slice(0, 2000),
    ).toEqual([]);
  }
}
