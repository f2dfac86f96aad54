import type { Problem } from '../core/problem.js';
import { visibleText } from '../core/visible-text.js';
import { type InventoryMp, SITE_HINT, SITE_NAME, VARIABLE_HINT, VARIABLE_NAME, type Variable } from './inventory.js';
import { parseCsv } from './parse-csv.js';
import { problemAt } from './place.js';

const REQUIRED = ['site', 'name', 'url'] as const;

export interface RowsRead {
  mps: InventoryMp[];
  problems: Problem[];
  /** Sites a row problem names: they get no stick. */
  refusedSites: Set<string>;
  /** A problem with the file as a whole (the header, a quote never closed). */
  refusedWhole: boolean;
}

/**
 * The flat inventory (docs/rolling-out.md, CSV): a header of column names, `site`, `name` and
 * `url` required, every other column a variable whose value is the cell's text (an empty cell:
 * not set). Rows whose cells are all empty are skipped. A row with a problem refuses its site.
 */
export function csvInventory(text: string, file: string): RowsRead {
  const parsed = parseCsv(text, file);
  const problems = [...parsed.problems];
  const refusedSites = new Set<string>();
  const mps: InventoryMp[] = [];
  const header = parsed.rows[0];
  let refusedWhole = parsed.problems.length > 0;
  if (header === undefined) {
    problems.push(problemAt({ file, line: 1, column: 1 }, 'the file is empty', 'the first row names the columns'));
    return { mps, problems, refusedSites, refusedWhole: true };
  }
  const names: string[] = [];
  const seen = new Map<string, number>();
  for (const cell of header.cells) {
    const place = { file, line: cell.line, column: cell.column };
    if (!VARIABLE_NAME.test(cell.text)) {
      problems.push(
        problemAt(place, `the column name '${visibleText(cell.text)}' is not a variable name`, VARIABLE_HINT),
      );
      refusedWhole = true;
    } else if (seen.has(cell.text)) {
      problems.push(
        problemAt(
          place,
          `the column '${cell.text}' is named twice (also column ${seen.get(cell.text)})`,
          'name each column once',
        ),
      );
      refusedWhole = true;
    }
    seen.set(cell.text, cell.column);
    names.push(cell.text);
  }
  for (const required of REQUIRED) {
    if (!seen.has(required)) {
      problems.push(
        problemAt(
          { file, line: 1, column: 1 },
          `the header has no '${required}' column`,
          'the columns site, name and url are required',
        ),
      );
      refusedWhole = true;
    }
  }
  if (refusedWhole) return { mps, problems, refusedSites, refusedWhole };

  for (const row of parsed.rows.slice(1)) {
    if (row.cells.every((cell) => cell.text.trim() === '')) continue;
    const vars = new Map<string, Variable>();
    row.cells.forEach((cell, index) => {
      const name = names[index];
      if (name !== undefined && cell.text !== '')
        vars.set(name, { value: cell.text, place: { file, line: cell.line, column: cell.column } });
    });
    const rowPlace = { file, line: row.line, column: 1 };
    const site = vars.get('site');
    const siteName = typeof site?.value === 'string' ? site.value : '';
    const refuse = (problem: Problem): void => {
      problems.push(problem);
      if (siteName !== '') refusedSites.add(siteName);
    };
    if (row.problems.length > 0) {
      row.problems.forEach(refuse);
      continue;
    }
    if (row.cells.length !== names.length) {
      const extra = row.cells[names.length];
      refuse(
        problemAt(
          extra === undefined ? rowPlace : { file, line: extra.line, column: extra.column },
          `the row has ${row.cells.length} field${row.cells.length === 1 ? '' : 's'}; the header has ${names.length}`,
          'a comma inside a field needs the field in double quotes',
        ),
      );
      continue;
    }
    let complete = true;
    for (const required of REQUIRED) {
      if (vars.has(required)) continue;
      complete = false;
      const cell = row.cells[names.indexOf(required)];
      refuse(
        problemAt(
          cell === undefined ? rowPlace : { file, line: cell.line, column: cell.column },
          `the ${required} is empty`,
        ),
      );
    }
    if (!complete || site === undefined) continue;
    if (!SITE_NAME.test(siteName)) {
      problems.push(problemAt(site.place, `the site name '${visibleText(siteName)}' is not allowed`, SITE_HINT));
      continue;
    }
    mps.push({ site: siteName, name: String(vars.get('name')?.value), place: rowPlace, vars });
  }
  return { mps, problems, refusedSites, refusedWhole };
}
