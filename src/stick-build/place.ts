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
