// The preflight of a stick read without its certificate checks: how the port answers a client
// certificate that the laptop's validation would refuse first (an expired one). Run inside the
// lab's laptop namespace: node run-unvalidated.mjs STICK_FILE PORT; prints the report as JSON.
import { loadStick } from '../../dist/config/index.js';
import { runPreflight, selectTarget } from '../../dist/preflight/index.js';

const [file, port] = process.argv.slice(2);
const loaded = await loadStick(file);
const choice = selectTarget(loaded.model, {});
if (!('target' in choice)) throw new Error(choice.usage);
const run = await runPreflight({ port, target: choice.target, files: loaded.files, timeoutMs: 5000 });
process.stdout.write(`${JSON.stringify(run.report)}\n`);
