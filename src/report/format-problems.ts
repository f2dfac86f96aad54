import { type Problem, Severity } from '../config/index.js';

/**
 * Renders configuration problems for people: `FILE:LINE:COL  key.path  message  (hint)`, one per
 * line, warnings marked. With `sourceText`, each is followed by its source line and a caret
 * under the column, as netplan does.
 */
export function formatProblem(problem: Problem, context?: { sourceText: string; secretValues: readonly string[] }): string {
  const where = `${problem.file}:${problem.line}:${problem.column}`;
  const severity = problem.severity === Severity.Warning ? 'warning: ' : '';
  const hint = problem.hint === undefined ? '' : `  (${problem.hint})`;
  const head = `${where}  ${problem.path === '' ? '(file)' : problem.path}  ${severity}${problem.message}${hint}`;
  if (context === undefined) return head;
  const line = context.sourceText.split(/\r?\n/)[problem.line - 1];
  if (line === undefined || line.trim() === '') return head;
  // A source line that holds a secret is never shown, whatever the problem on it.
  if (SECRET_LINE.test(line) || context.secretValues.some((v) => v !== '' && line.includes(v))) return head;
  return `${head}\n    ${line}\n    ${' '.repeat(Math.max(0, problem.column - 1))}^`;
}

const SECRET_LINE = /password|passphrase/i;

export function summarizeProblems(problems: readonly Problem[]): string {
  const errors = problems.filter((p) => p.severity === Severity.Error).length;
  const warnings = problems.length - errors;
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
}
