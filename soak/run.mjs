// `npm run soak`: the real daemon (`mpprov run`, a child process) through N stick insertions against
// a simulated device with seeded random faults, then checks that nothing leaked and every job is
// accounted for. Needs root (mount) and, for the FAT share, /dev/fuse + fusefat.
//   node soak/run.mjs [--cycles N] [--seed S] [--fat-every N]     (needs dist/: npm run build)
//   env: MPPROV_SOAK_CYCLES, MPPROV_SOAK_SEED, MPPROV_SOAK_FAT_EVERY
// Prints a progress line now and then and a JSON summary, also written to .test-output/soak.json.
// Exit status 1 when any check fails.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startSimulator } from '../dist/simulator/index.js';
import { makeFatImage, makeWorld, repoRoot, requireFatTools, sleep, startAgent } from '../bench/daemon-lib.mjs';
import { children, fdCount, mountsUnder, rssKiB } from './probes.mjs';
import { jobHistory } from './job-history.mjs';
import { insertFatStick, insertTmpfsStick, profileDevice, profileStick } from './stick.mjs';

const arg = (name, envName, fallback) => {
  const i = process.argv.indexOf(name);
  const raw = i >= 0 ? process.argv[i + 1] : process.env[envName];
  return raw === undefined || raw === '' ? fallback : Number(raw);
};
const cycles = arg('--cycles', 'MPPROV_SOAK_CYCLES', 1000);
const seed = arg('--seed', 'MPPROV_SOAK_SEED', Date.now() % 2 ** 31);
const fatEvery = arg('--fat-every', 'MPPROV_SOAK_FAT_EVERY', 10);
if (!Number.isInteger(cycles) || cycles < 10) throw new Error('--cycles must be a whole number of at least 10');
if (fatEvery > 0) requireFatTools();
if (process.getuid?.() !== 0) throw new Error('the soak mounts tmpfs sticks: run it as root');

/** How long a cycle may take from mount to its job's end before it counts as a hang. */
const CYCLE_TIMEOUT_MS = 60_000;
/**
 * The agent's RSS climbs for its first hundred or so jobs (V8 grows its heap and compiles as the
 * job paths warm up: 135 MiB at cycle 10, 175 at 100, then flat at 177-178 to cycle 450 in a
 * 1 000-cycle run here), so growth is measured from the tenth of the run but never before cycle
 * 100, and only in runs of at least 200 cycles.
 */
const RSS_WARM_UP_CYCLES = 100;
const rssBaselineCycle = Math.max(cycles >= 2 * RSS_WARM_UP_CYCLES ? RSS_WARM_UP_CYCLES : 10, Math.round(cycles / 10));
/** A share of the device cycles (valid and unchanged sticks) that get a fault. */
const FAULT_SHARE = 0.25;
/**
 * The simulator's faults (src/simulator/faults.ts). A 429 is not among them: the simulator answers
 * 429 only to the service endpoints, which no stick here uses.
 */
const FAULTS = [
  'error=1,times=1', // one 500
  'error=1', // 500 to everything: FAILED
  'latency=300ms,times=3',
  'drop=1,times=1', // one dropped connection
  'drop=1,times=2@POST *',
  'restart-delay=1500ms', // a longer outage than announced
  'no-return', // never back: FAILED after timeouts.restart_s
  'pending-stuck',
  'drop-field=gateway', // a wrong active configuration after the restart
  'new-cert', // another TLS certificate after the restart: FAILED
];

/** mulberry32: a small seeded generator, so a run can be repeated with its printed seed. */
function random(s) {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = random(seed);
console.log(
  `soak: ${cycles} cycles, seed ${seed} (repeat with --seed ${seed}), FAT stick every ${fatEvery > 0 ? fatEvery : 'never'}`,
);

const sim = await startSimulator(await profileDevice());
const world = await makeWorld();
// eject false: the soak unmounts each stick itself. No status page (status.json is always written).
// The device is pinned in agent.yaml too; the sticks name it with the profiles' own CA.
await writeFile(
  world.agentConfig,
  [
    'version: 1',
    `media_roots: [${world.mediaRoot}]`,
    `state_dir: ${world.stateDir}`,
    'log_level: info',
    'timeouts: { request_s: 5, restart_s: 4 }',
    'when_done: { eject: false }',
    'devices:',
    `  "${sim.url}":`,
    `    tls: { fingerprint_sha256: "${sim.fingerprintSha256}" }`,
    '',
  ].join('\n'),
);
const stages = join(world.dir, 'stages');
const env = { ...process.env };
// The agent's status.json lives under $RUNTIME_DIRECTORY; keep it inside the world.
process.env.RUNTIME_DIRECTORY = join(world.dir, 'run');
const agent = await startAgent(world);
process.env = env;
const pid = agent.child.pid;

const valid = [
  { name: 'static-dual-stack', files: await profileStick('static-dual-stack.yaml', sim.url) },
  { name: 'eap-tls-pem', files: await profileStick('eap-tls-pem.yaml', sim.url) },
];
const invalidFiles = await profileStick('static-dual-stack.yaml', sim.url, (t) =>
  t.replace('method: static', 'method: statc'),
);

const violations = [];
const violate = (cycle, what) => {
  violations.push({ cycle, what });
  console.log(`VIOLATION cycle ${cycle}: ${what}`);
};
const outcomes = {};
let faultsInjected = 0;
/** The reason a fault's failed job gave, one example per fault, for the summary. */
const failureReasons = {};
let fatCycles = 0;
/** What the device holds now: the name of a valid stick, or `initial` after a reset. */
let deviceConfig = 'initial';
let lastValid = valid[0];
const samples = {};
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
let jobsSeen = 0;

const history = jobHistory(world.stateDir);

try {
  for (let cycle = 1; cycle <= cycles; cycle++) {
    const kind = ['valid', 'invalid', 'unchanged'][(cycle - 1) % 3];
    let config;
    let files;
    if (kind === 'valid') {
      config = valid[Math.floor((cycle - 1) / 3) % 2];
      lastValid = config;
      files = config.files;
    } else if (kind === 'unchanged') {
      config = lastValid;
      files = config.files;
    } else files = invalidFiles;
    const fault = kind !== 'invalid' && rand() < FAULT_SHARE ? FAULTS[Math.floor(rand() * FAULTS.length)] : undefined;
    const expected = kind === 'invalid' ? 'FAILED' : config.name === deviceConfig ? 'NO CHANGE' : 'CHANGED';
    if (fault !== undefined) {
      sim.setFaults([fault]);
      faultsInjected += 1;
    }

    const fat = fatEvery > 0 && cycle % fatEvery === 0;
    const mountPoint = join(world.mediaRoot, fat ? 'SOAKFAT' : 'SOAK');
    const stick = fat
      ? await insertFatStick(
          join(world.dir, 'soak.img'),
          mountPoint,
          join(world.dir, 'fusefat.log'),
          files,
          makeFatImage,
        )
      : await insertTmpfsStick(join(stages, String(cycle)), mountPoint, files);
    if (fat) fatCycles += 1;
    const end = await history.waitForEnd(stick, cycle, CYCLE_TIMEOUT_MS);
    await stick.unmount();
    const left = await mountsUnder(world.mediaRoot);
    if (left.length > 0) violate(cycle, `mounts left under the media root after the unmount: ${left.join(', ')}`);
    const said = await stick.result();
    await stick.dispose();

    const what = `${kind} ${config?.name ?? 'invalid'}${fat ? ' (FAT)' : ''}${fault === undefined ? '' : ` with fault ${fault}`}`;
    if (end === undefined) {
      violate(
        cycle,
        `${what}: no job end within ${CYCLE_TIMEOUT_MS / 1000} s (stick: ${said.resultFiles.join(', ') || 'no result file'})`,
      );
      break; // Everything after would be off by one: a hang ends the soak.
    }
    jobsSeen = cycle;
    const allowed = fault === undefined ? [expected] : [expected, 'FAILED'];
    outcomes[`${kind}${fault === undefined ? '' : '+fault'}: ${end.result}`] =
      (outcomes[`${kind}${fault === undefined ? '' : '+fault'}: ${end.result}`] ?? 0) + 1;
    if (!allowed.includes(end.result))
      violate(cycle, `${what}: the job says ${end.result}, expected ${allowed.join(' or ')} (${end.summary})`);
    if (said.resultFiles.length !== 1)
      violate(cycle, `${what}: result files on the stick: ${said.resultFiles.join(', ') || 'none'}`);
    else if (said.word !== end.result)
      violate(cycle, `${what}: the stick's result file says ${said.word}, the state dir ${end.result}`);
    if (said.busy) violate(cycle, `${what}: MPPROV-BUSY.TXT left on the stick`);
    if (!said.resultLine.startsWith(`RESULT: ${end.result}  `) || !said.resultLine.endsWith(`[${end.id}]`)) {
      violate(
        cycle,
        `${what}: usb.log's last line is not the job's RESULT line: ${JSON.stringify(said.resultLine.slice(0, 200))}`,
      );
    }
    if (!said.text.includes(`job ${end.id}`))
      violate(
        cycle,
        `${what}: the result file does not name job ${end.id}: ${JSON.stringify(said.text.slice(0, 200))}`,
      );
    // A failure must say why: "mpprov FAILED at HH:MM (stick ..., job ...): <reason>. What to do: ..."
    const reason = /^mpprov FAILED at \d\d:\d\d \(.*?, job [^)]+\): (.+?)\. What to do: /.exec(said.text)?.[1] ?? '';
    if (end.result === 'FAILED' && (reason.trim() === '' || end.summary.trim() === '')) {
      violate(cycle, `${what}: FAILED without a reason on the stick: ${JSON.stringify(said.text.slice(0, 200))}`);
    }
    if (end.result === 'FAILED' && fault !== undefined) failureReasons[fault] = reason.slice(0, 160);
    if (kind !== 'invalid') {
      if (fault !== undefined) {
        // Whatever the fault did (a new certificate, no return, a half-applied change), the device
        // starts over from its first configuration: the next expectation is known again.
        sim.setFaults([]);
        await sim.reset();
        deviceConfig = 'initial';
      } else if (end.result !== 'FAILED') deviceConfig = config.name;
    }

    if (cycle === 10) samples.fdsAtCycle10 = await fdCount(pid);
    if (cycle === rssBaselineCycle) samples.rssAtBaselineKiB = await rssKiB(pid);
    if (cycle % Math.max(10, Math.round(cycles / 20)) === 0 || cycle === cycles) {
      console.log(
        `cycle ${cycle}/${cycles}  elapsed ${elapsed()}  fds ${await fdCount(pid)}  rss ${Math.round((await rssKiB(pid)) / 1024)} MiB  faults ${faultsInjected}  violations ${violations.length}`,
      );
    }
  }

  // Give the agent a moment to finish tidying the last job before the final samples.
  await sleep(1000);
  samples.fdsAtEnd = await fdCount(pid);
  samples.rssAtEndKiB = await rssKiB(pid);
  const kids = await children(pid);
  const leakedChildren = kids.filter((c) => c.comm !== 'findmnt');
  if (leakedChildren.length > 0)
    violate(
      cycles,
      `child processes of the agent besides findmnt: ${leakedChildren.map((c) => `${c.pid} ${c.comm}`).join(', ')}`,
    );
  if (samples.fdsAtCycle10 !== undefined && samples.fdsAtEnd - samples.fdsAtCycle10 > 5)
    violate(cycles, `file descriptors grew from ${samples.fdsAtCycle10} at cycle 10 to ${samples.fdsAtEnd}`);
  const rssGrowth = (samples.rssAtEndKiB - samples.rssAtBaselineKiB) / samples.rssAtBaselineKiB;
  samples.rssGrowthPercent = Math.round(rssGrowth * 1000) / 10;
  const rssChecked = cycles >= 2 * RSS_WARM_UP_CYCLES;
  if (!rssChecked)
    console.log(
      `RSS not checked: ${cycles} cycles are too few to tell a leak from the warm-up (${RSS_WARM_UP_CYCLES} cycles); run at least ${2 * RSS_WARM_UP_CYCLES}`,
    );
  else if (!(rssGrowth < 0.1))
    violate(
      cycles,
      `RSS grew ${samples.rssGrowthPercent} % (${samples.rssAtBaselineKiB} KiB at cycle ${rssBaselineCycle}, ${samples.rssAtEndKiB} KiB at the end)`,
    );
  const { starts, ends, interrupted } = await history.read();
  if (starts.length !== jobsSeen || ends.length !== jobsSeen)
    violate(cycles, `the state dir has ${starts.length} job starts and ${ends.length} ends for ${jobsSeen} insertions`);
  if (interrupted.length > 0) violate(cycles, `${interrupted.length} interrupted job(s) in the state dir`);
  const leftMounts = [...(await mountsUnder(world.mediaRoot)), ...(await mountsUnder(stages))];
  if (leftMounts.length > 0) violate(cycles, `mounts left: ${leftMounts.join(', ')}`);

  const summary = {
    soak: 'daemon-stick-cycles',
    ok: violations.length === 0,
    cycles,
    completed: jobsSeen,
    seed,
    duration_s: Math.round((Date.now() - started) / 100) / 10,
    fat_cycles: fatCycles,
    faults_injected: faultsInjected,
    jobs: { starts: starts.length, ends: ends.length, interrupted: interrupted.length },
    outcomes,
    failure_reasons: failureReasons,
    fds: { at_cycle_10: samples.fdsAtCycle10, at_end: samples.fdsAtEnd },
    rss_kib: {
      baseline_cycle: rssBaselineCycle,
      at_baseline: samples.rssAtBaselineKiB,
      at_end: samples.rssAtEndKiB,
      growth_percent: samples.rssGrowthPercent,
      checked: rssChecked,
    },
    children: kids.map((c) => c.comm),
    violations: violations.slice(0, 50),
    violation_count: violations.length,
  };
  console.log(JSON.stringify(summary, null, 2));
  await mkdir(join(repoRoot, '.test-output'), { recursive: true });
  await writeFile(join(repoRoot, '.test-output/soak.json'), `${JSON.stringify(summary, null, 2)}\n`);
  if (!summary.ok) {
    console.log(
      `soak FAILED (${violations.length} violation(s)); agent output: ${join(world.dir, 'agent.out')} (kept)`,
    );
    process.exitCode = 1;
  }
} finally {
  await agent.stop();
  await sim.close();
  for (const target of [...(await mountsUnder(world.mediaRoot)), ...(await mountsUnder(stages))].reverse()) {
    await import('node:child_process').then(({ execFileSync }) => execFileSync('umount', ['-l', target]));
  }
  if (process.exitCode !== 1) await world.cleanup();
}
