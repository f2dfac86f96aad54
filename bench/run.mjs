// `npm run bench [-- --quick] [--only apply,validate,fleet,service,events,daemon,ansible,stick-build]
//   [--cli checkout] [--out FILE] [--cycles N] [--idle S] [--rounds N] [--fleet-outage-ms MS]
//   [--keep-node-extra-ca-certs]`: the figures docs/performance.md sets targets for, each as
// median/min/max over its runs beside its target, written to bench/results.json with the machine,
// Node version and date. Speed and memory targets live
// here, never in timed unit tests. Measures the command package.json's bin names (the bundle's
// launcher). Needs the build (`npm run build`, which `npm run bench` runs: dist/ and the bundle),
// root and curl; see README "Performance".
//   full (default): 5 rounds of everything, fleets of 50 and 200, the fleet with the service at 200
//   and 1 000 MPs, 200 agent jobs
//   --quick: a sanity run, 2 rounds, fleets of 50 (conc 8) and 200 (conc 32), the service rows at 200,
//   40 agent jobs, 15 s idle
// Prints a line per measurement, then the table (bench/table.mjs); exit status 1 when a target
// is missed, 2 when a section failed to measure.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ansibleFleet } from './ansible-fleet.mjs';
import { applySweep } from './apply-sweep.mjs';
import { daemonBench } from './daemon.mjs';
import { bundle, cli, repoRoot } from './daemon-lib.mjs';
import { fleetApply } from './fleet-apply.mjs';
import { fleetService } from './fleet-service.mjs';
import { serviceEvents } from './service-events.mjs';
import { judgedFigures, machine } from './lib/stats.mjs';
import { stickBuildBench } from './stick-build.mjs';
import { renderTable } from './table.mjs';
import { validateCold } from './validate-cold.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? (args[onlyAt + 1] ?? '').split(',') : undefined;
const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : join(repoRoot, 'bench/results.json');
// --cli checkout: measure dist/cli/main.js (tsc's output, as tests run it) instead of the bundle.
const entry = args.includes('--cli') && args[args.indexOf('--cli') + 1] === 'checkout' ? cli : bundle;

const plan = quick
  ? {
      rounds: 2,
      fleetCases: [
        [50, 8],
        [200, 32],
      ],
      fleetRuns: 2,
      fleetOutageMs: 1000,
      serviceSizes: [200],
      serviceRuns: 1,
      cycles: 40,
      idleSeconds: 15,
    }
  : {
      rounds: 5,
      fleetCases: [
        [50, 8],
        [50, 32],
        [200, 8],
        [200, 32],
      ],
      fleetRuns: 5,
      fleetOutageMs: 1000,
      serviceSizes: [200, 1000],
      serviceRuns: 1,
      cycles: 200,
      idleSeconds: 60,
    };

// Overrides for a look at one part: --cycles N (agent jobs), --idle S (seconds), --rounds N,
// --fleet-outage-ms MS (the fleet's restart outage, 1000 by default: the fleet is a third of the
// full run's time; 500 brings the full run from about 12 to about 10 minutes).
for (const [flag, key] of [
  ['--cycles', 'cycles'],
  ['--idle', 'idleSeconds'],
  ['--rounds', 'rounds'],
  ['--fleet-outage-ms', 'fleetOutageMs'],
]) {
  if (args.includes(flag)) plan[key] = Number(args[args.indexOf(flag) + 1]);
}
// --service-sizes 200,1000: the fleet sizes of the service rows.
if (args.includes('--service-sizes'))
  plan.serviceSizes = (args[args.indexOf('--service-sizes') + 1] ?? '').split(',').map(Number);

for (const [file, how] of [
  [cli, 'npm run build'],
  [bundle, 'npm run build'],
]) {
  if (!existsSync(file)) throw new Error(`${file} is missing: run ${how} (npm run bench builds both)`);
}

const log = (line) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);

// NODE_EXTRA_CA_CERTS makes Node 20 parse the file's certificates at every start, before the first
// line of any script (Debian's bundle: 140 certificates, about 38 ms). It is this machine's
// environment, not mpprov's: Debian sets none, the agent runs under systemd without it, and mpprov
// trusts devices by pin or CA. The measured processes run without it, as on a technician's laptop;
// what it costs each node start here is measured and recorded beside the figures.
// --keep-node-extra-ca-certs measures with it.
const extraCaCerts = process.env.NODE_EXTRA_CA_CERTS;
const keepExtraCaCerts = args.includes('--keep-node-extra-ca-certs');
const extraCaCertsCost =
  extraCaCerts === undefined ? undefined : nodeStartCostOf({ NODE_EXTRA_CA_CERTS: extraCaCerts });
if (extraCaCerts !== undefined && !keepExtraCaCerts) delete process.env.NODE_EXTRA_CA_CERTS;
const git = (...a) => execFileSync('git', a, { cwd: repoRoot, encoding: 'utf8' }).trim();
const started = Date.now();
const results = {
  mode: quick ? 'quick' : 'full',
  date: new Date().toISOString(),
  machine: {
    ...machine(),
    node_extra_ca_certs: extraCaCerts ?? null,
    ...(extraCaCerts === undefined
      ? {}
      : {
          node_extra_ca_certs_in_measured_processes: keepExtraCaCerts,
          node_extra_ca_certs_start_cost_ms: extraCaCertsCost,
        }),
  },
  node: process.version,
  commit:
    git('rev-parse', '--short', 'HEAD') +
    (git('status', '--porcelain', '--untracked-files=no') === '' ? '' : ' (with uncommitted changes)'),
  cli:
    entry === bundle
      ? "dist/mpprov.cjs (package.json's bin: the bundle that ships as /usr/bin/mpprov) unless said"
      : 'dist/cli/main.js (the checkout build) unless said',
  plan,
};

const workDir = await mkdtemp(join(tmpdir(), 'mpprov-bench-'));
const sections = {
  apply: () => applySweep({ rounds: plan.rounds, entry, workDir, log }),
  validate: () => validateCold({ runs: Math.max(5, plan.rounds), entries: { bundle, checkout: cli }, log }),
  fleet: () =>
    fleetApply({ cases: plan.fleetCases, runs: plan.fleetRuns, outageMs: plan.fleetOutageMs, entry, workDir, log }),
  // The service rows' settings are the issue's: concurrency 32, 2 s outage, 3 s reconnect.
  service: () =>
    fleetService({
      sizes: plan.serviceSizes,
      concurrency: 32,
      runs: plan.serviceRuns,
      outageMs: 2000,
      reconnectMs: 3000,
      pathDataMs: 3000,
      entry,
      workDir,
      log,
    }),
  events: () => serviceEvents({ count: 200, runs: plan.fleetRuns, log }),
  daemon: () => daemonBench({ cycles: plan.cycles, idleSeconds: plan.idleSeconds, entry, log }),
  ansible: () => ansibleFleet({ count: 100, runs: 1, outageMs: plan.fleetOutageMs, entry, workDir, log }),
  'stick-build': () => stickBuildBench({ runs: Math.min(plan.rounds, 3), entry, workDir, log }),
};
let failedSections = 0;
try {
  for (const [name, section] of Object.entries(sections)) {
    if (only !== undefined && !only.includes(name)) continue;
    // The per-host Ansible path alone takes minutes: a quick run leaves it out unless named.
    if (only === undefined && quick && name === 'ansible') continue;
    log(`# ${name}`);
    try {
      results[name] = await section();
    } catch (error) {
      failedSections += 1;
      results[name] = { error: error instanceof Error ? error.message : String(error) };
      log(`${name} FAILED: ${results[name].error}`);
    }
  }
} finally {
  await rm(workDir, { recursive: true, force: true });
}
results.duration_s = Math.round((Date.now() - started) / 1000);
const judgedList = judgedFigures(results);
results.targets = {
  met: judgedList.filter(([, f]) => f.met).length,
  missed: judgedList.filter(([, f]) => !f.met).map(([path]) => path),
};
await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\n${renderTable(results)}\n`);
console.log(
  `${out}: ${results.targets.met} target(s) met, ${results.targets.missed.length} missed, ${results.duration_s} s`,
);
process.exitCode = failedSections > 0 ? 2 : results.targets.missed.length > 0 ? 1 : 0;

/**
 * How much later a bare `node -e 0` ends with `extra` in its environment than without it: the
 * median of 11 interleaved pairs, in ms of wall time.
 */
function nodeStartCostOf(extra) {
  const base = { ...process.env };
  delete base.NODE_EXTRA_CA_CERTS;
  const wall = (env) => {
    const started = performance.now();
    execFileSync(process.execPath, ['-e', '0'], { env });
    return performance.now() - started;
  };
  const differences = [];
  for (let i = 0; i < 11; i++) differences.push(wall({ ...base, ...extra }) - wall(base));
  differences.sort((a, b) => a - b);
  return Math.round(differences[5]);
}
