import type { Problem } from '../core/problem.js';
import { problemAt } from './place.js';

/** One field as RFC 4180 reads it, with where it starts in the file (1-based). */
interface CsvCell {
  text: string;
  line: number;
  column: number;
}

export interface CsvRow {
  /** The physical line the row starts on (the header is line 1). */
  line: number;
  cells: CsvCell[];
  /** What is wrong inside the row (text after a closing quote): the row's site gets no stick. */
  problems: Problem[];
}

/**
 * RFC 4180, as spreadsheets export it: fields separated by commas, rows by CRLF or LF; a field in
 * double quotes may hold commas, line breaks and doubled quotes. One pass over the text, no
 * backtracking, so 10 000 rows (or one endless quoted field) cost what their length costs. A
 * field is text and nothing else: `=cmd|...` stays those characters. Hand-written because the
 * positions a problem names (the physical line and column of each field) are what no CSV library
 * on this project's list reports. A line break inside a quoted field is kept as LF.
 */
export function parseCsv(text: string, file: string): { rows: CsvRow[]; problems: Problem[] } {
  const rows: CsvRow[] = [];
  const problems: Problem[] = [];
  let i = 0;
  let line = 1;
  let column = 1;
  const length = text.length;
  const atLineEnd = (): number =>
    text[i] === '\n' ? 1 : text[i] === '\r' && text[i + 1] === '\n' ? 2 : text[i] === '\r' ? 1 : 0;
  while (i < length) {
    const row: CsvRow = { line, cells: [], problems: [] };
    for (;;) {
      const cell: CsvCell = { text: '', line, column };
      if (text[i] === '"') {
        i += 1;
        column += 1;
        let closed = false;
        const parts: string[] = [];
        let from = i;
        while (i < length) {
          const c = text[i];
          if (c === '"') {
            parts.push(text.slice(from, i));
            if (text[i + 1] === '"') {
              parts.push('"');
              i += 2;
              column += 2;
              from = i;
              continue;
            }
            i += 1;
            column += 1;
            closed = true;
            break;
          }
          const end = atLineEnd();
          if (end > 0) {
            parts.push(text.slice(from, i), '\n');
            i += end;
            line += 1;
            column = 1;
            from = i;
            continue;
          }
          i += 1;
          column += 1;
        }
        if (!closed) {
          problems.push(
            problemAt(
              { file, line: cell.line, column: cell.column },
              'this quoted field is never closed: the rest of the file would be its text',
              'close the field with a double quote (a quote inside a field is written twice: "")',
            ),
          );
          return { rows, problems };
        }
        cell.text = parts.join('');
        if (i < length && text[i] !== ',' && atLineEnd() === 0) {
          row.problems.push(
            problemAt(
              { file, line, column },
              'text follows the closing quote of a field',
              'put the whole field in quotes, and write a quote inside it twice ("")',
            ),
          );
          while (i < length && text[i] !== ',' && atLineEnd() === 0) {
            i += 1;
            column += 1;
          }
        }
      } else {
        const from = i;
        while (i < length && text[i] !== ',' && atLineEnd() === 0) i += 1;
        cell.text = text.slice(from, i);
        column += i - from;
      }
      row.cells.push(cell);
      if (i < length && text[i] === ',') {
        i += 1;
        column += 1;
        continue;
      }
      i += atLineEnd();
      line += 1;
      column = 1;
      break;
    }
    rows.push(row);
  }
  return { rows, problems };
}
