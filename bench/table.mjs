// bench/results.json as a Markdown table (the README's "Performance" table):
//   node bench/table.mjs [results.json]
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** [path, figure] of every figure (an object with a median and a unit) in the tree. */
function figures(tree, path = []) {
  if (tree === null || typeof tree !== 'object' || Array.isArray(tree)) return [];
  if ('median' in tree && 'unit' in tree) return [[path, tree]];
  return Object.entries(tree).flatMap(([key, value]) => (key === 'plan' ? [] : figures(value, [...path, key])));
}

const label = (path) =>
  path
    .map((p) =>
      p
        .replace(/^outage_(\d+)_ms$/, 'outage $1 ms')
        .replace(/_(ms|mib|s|percent)$/, '')
        .replaceAll('_', ' '),
    )
    .join(' · ');

/** What the machine's NODE_EXTRA_CA_CERTS did to the figures (bench/run.mjs removes it by default). */
function extraCaCertsText(m) {
  if (!m.node_extra_ca_certs) return '';
  const cost =
    m.node_extra_ca_certs_start_cost_ms === undefined
      ? ''
      : `, +${m.node_extra_ca_certs_start_cost_ms} ms a node start`;
  return m.node_extra_ca_certs_in_measured_processes === false
    ? `; NODE_EXTRA_CA_CERTS=${m.node_extra_ca_certs} set here (parsed at every node start${cost}), removed for the measured processes`
    : `; NODE_EXTRA_CA_CERTS=${m.node_extra_ca_certs} (parsed at every node start${cost}, in every figure)`;
}

const unitText = (unit) => (unit === 'ratio' || unit === 'count' ? '' : ` ${unit}`);

export function renderTable(results) {
  const m = results.machine;
  const head = [
    `${results.mode} run, ${results.date.slice(0, 10)}, commit ${results.commit}; ${m.cpu}, ${m.cores} cores, ${Math.round(m.memory_mib / 1024)} GiB; Node ${results.node}; load average at start ${m.load_average_at_start.join(' ')}${extraCaCertsText(m)}`,
    '',
    '| figure | median | min | max | runs | target | met |',
    '|---|---:|---:|---:|---:|---|---|',
  ];
  const rows = figures(results).map(([path, f]) => {
    const u = unitText(f.unit);
    const range = f.min === undefined ? ['', ''] : [`${f.min}${u}`, `${f.max}${u}`];
    return `| ${label(path)} | ${f.median}${u} | ${range[0]} | ${range[1]} | ${f.runs} | ${f.target ?? ''} | ${f.met === undefined ? '' : f.met ? 'yes' : '**no**'} |`;
  });
  const errors = Object.entries(results)
    .filter(([, v]) => v !== null && typeof v === 'object' && 'error' in v)
    .map(([k, v]) => `\n${k}: not measured: ${v.error}`);
  return [...head, ...rows].join('\n') + errors.join('');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ?? fileURLToPath(new URL('results.json', import.meta.url));
  console.log(renderTable(JSON.parse(await readFile(file, 'utf8'))));
}
