import { type Problem, Severity } from '../config/index.js';
import { visibleText as v } from '../core/visible-text.js';

/** Where a problem's source line comes from: the loaded file, which withholds lines holding a secret. */
export interface ProblemSource {
  sourceLine(line: number): string | undefined;
}

/**
 * Renders configuration problems for people: `FILE:LINE:COL  key.path  message  (hint)`, one per
 * line, warnings marked. With a `source`, each is followed by its source line and a caret under
 * the column, as netplan does; the source gives no line that holds any part of a secret. Messages
 * quote the stick's keys and values, and the source line is the stick's own text: every part is
 * shown with its control characters escaped (visibleText), so each line printed is one line.
 */
export function formatProblem(problem: Problem, source?: ProblemSource): string {
  const where = `${v(problem.file)}:${problem.line}:${problem.column}`;
  const severity = problem.severity === Severity.Warning ? 'warning: ' : '';
  const hint = problem.hint === undefined ? '' : `  (${v(problem.hint)})`;
  const head = `${where}  ${problem.path === '' ? '(file)' : v(problem.path)}  ${severity}${v(problem.message)}${hint}`;
  const line = source?.sourceLine(problem.line);
  if (line === undefined || line.trim() === '') return head;
  return `${head}\n    ${v(line)}\n    ${' '.repeat(Math.max(0, problem.column - 1))}^`;
}

export function summarizeProblems(problems: readonly Problem[]): string {
  const errors = problems.filter((p) => p.severity === Severity.Error).length;
  const warnings = problems.length - errors;
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
}
