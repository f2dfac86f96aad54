import { type Problem, Severity } from '../core/problem.js';

/** Where a value of the inventory or the template is: a file, a 1-based line and column. */
export interface Place {
  file: string;
  line: number;
  column: number;
}

/** A located error, as the stick's own problems are (docs/rolling-out.md: FILE:LINE:COL, key path). */
export function problemAt(place: Place, message: string, hint?: string, path = ''): Problem {
  return {
    severity: Severity.Error,
    file: place.file,
    line: place.line,
    column: place.column,
    path,
    message,
    ...(hint === undefined ? {} : { hint }),
  };
}

/**
 * The 1-based line and column of an offset in a text, counted from the text itself: the YAML
 * parser gives a syntax error's position only as an offset (its `linePos` needs `prettyErrors`),
 * and its own line counter loses count after a stretch it cannot read.
 */
export function positionIn(text: string, offset: number): { line: number; column: number } {
  const end = Math.max(0, Math.min(offset, text.length));
  let line = 1;
  let lineStart = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < end; at = text.indexOf('\n', at + 1)) {
    line += 1;
    lineStart = at + 1;
  }
  return { line, column: end - lineStart + 1 };
}
