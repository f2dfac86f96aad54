// Issue target: validating a profile with a PFX and an RSA-2048 chain takes well under a second.
// Measures validateStick (YAML, schema, rules, every file read, the PFX opened and every
// certificate checked) on profiles/eap-tls-pfx.yaml; prints one JSON line.
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { validateStick } = await import(`${root}dist/certs/index.js`);
const file = `${root}profiles/eap-tls-pfx.yaml`;

const first = performance.now();
await validateStick(file);
const coldMs = performance.now() - first;
const runs = [];
for (let i = 0; i < 20; i++) {
  const t = performance.now();
  const result = await validateStick(file);
  runs.push(performance.now() - t);
  if (result.problems.some((p) => p.severity === 'error')) throw new Error('profile did not validate');
}
runs.sort((a, b) => a - b);
const median = runs[Math.floor(runs.length / 2)];
const targetMs = 1000;
console.log(JSON.stringify({ bench: 'validate-pfx-profile', cold_ms: +coldMs.toFixed(1), median_ms: +median.toFixed(1), max_ms: +runs.at(-1).toFixed(1), target_ms: targetMs, ok: coldMs < targetMs && median < targetMs }));
