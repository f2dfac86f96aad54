// How the bench reports a figure: median, min and max over its runs, and its target beside it.
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

const round = (value, digits) => Number(value.toFixed(digits));

/** `{ unit, runs, median, min, max, values }` of a list of measurements (at least one). */
export function summarize(values, unit, digits = unit === 'ms' ? 0 : 1) {
  if (values.length === 0) throw new Error('no measurement to summarize');
  return {
    unit,
    runs: values.length,
    median: round(median(values), digits),
    min: round(Math.min(...values), digits),
    max: round(Math.max(...values), digits),
    values: values.map((v) => round(v, digits)),
  };
}

/**
 * A figure with its target: `op` '<' or '<=', compared with the figure's `by` (median unless
 * said). The target text says what is compared, so results.json reads on its own.
 */
export function judged(figure, op, value, by = 'median') {
  const actual = figure[by];
  const met = op === '<' ? actual < value : op === '<=' ? actual <= value : op === '==' ? actual === value : undefined;
  if (met === undefined) throw new Error(`unknown comparison ${op}`);
  return {
    ...figure,
    target: `${by} ${op} ${value}${figure.unit === 'ratio' || figure.unit === 'count' ? '' : ` ${figure.unit}`}`,
    met,
  };
}

/** The machine a result was taken on, for results.json. */
export function machine() {
  const cores = cpus();
  return {
    cpu: cores[0]?.model ?? 'unknown',
    cores: cores.length,
    memory_mib: Math.round(totalmem() / 1024 / 1024),
    load_average_at_start: loadavg().map((l) => round(l, 2)),
    kernel: execFileSync('uname', ['-sr'], { encoding: 'utf8' }).trim(),
  };
}

/** Every `met` in a results tree: [path, figure] of each judged figure. */
export function judgedFigures(tree, path = []) {
  if (tree === null || typeof tree !== 'object') return [];
  if ('met' in tree && 'target' in tree) return [[path.join(' / '), tree]];
  return Object.entries(tree).flatMap(([key, value]) => judgedFigures(value, [...path, key]));
}
