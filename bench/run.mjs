// `npm run bench`: every bench/*.mjs in turn, each printing JSON lines with its numbers and target.
// Speed and memory targets live here, never in timed unit tests.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
let failed = 0;
for (const file of readdirSync(dir).filter((f) => f.endsWith('.mjs') && f !== 'run.mjs' && !f.endsWith('-lib.mjs')).sort()) {
  if (only.length > 0 && !only.some((o) => file.includes(o))) continue;
  console.log(`# ${file}`);
  const result = spawnSync(process.execPath, ['--expose-gc', `${dir}${file}`], { stdio: 'inherit' });
  if (result.status !== 0) failed += 1;
}
process.exitCode = failed === 0 ? 0 : 1;
