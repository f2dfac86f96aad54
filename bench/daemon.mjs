// The agent (`mpprov run`, started as systemd/mpprov.service starts it: the unit's NODE_OPTIONS,
// the status page on as in the sample agent.yaml) through stick insertions:
// - mount to first request: a tmpfs stick bind-mounted under the media root (the soak's sticks),
//   from `mount` returning to the simulated device's first logged request, for each of the first
//   10 jobs;
// - idle after those 10 jobs: RSS sampled every 5 s and CPU seconds used over the idle period;
// - RSS after 10 and after `cycles` jobs, each sampled 5 times 200 ms apart right after the job.
// Every job changes the device (the soak's two valid profiles in turn, 100 ms restarts).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startSimulator } from '../dist/simulator/index.js';
import { jobHistory } from '../soak/job-history.mjs';
import { rssKiB } from '../soak/probes.mjs';
import { insertTmpfsStick, profileDevice, profileStick } from '../soak/stick.mjs';
import { makeWorld, processUsage, sleep, startAgent, unitNodeOptions } from './daemon-lib.mjs';
import { judged, summarize } from './lib/stats.mjs';

const FIRST_JOBS = 10;
const JOB_TIMEOUT_MS = 60_000;

async function rssSamples(pid, count, everyMs) {
  const samples = [];
  for (let i = 0; i < count; i++) {
    if (i > 0) await sleep(everyMs);
    samples.push((await rssKiB(pid)) / 1024);
  }
  return samples;
}

export async function daemonBench({ cycles, idleSeconds, entry, log }) {
  if (process.getuid?.() !== 0) throw new Error('the daemon bench mounts tmpfs sticks: run it as root');
  if (cycles < FIRST_JOBS) throw new Error(`the daemon bench needs at least ${FIRST_JOBS} cycles`);
  const sim = await startSimulator({ ...(await profileDevice()), restartMs: 100 });
  const world = await makeWorld();
  await writeFile(
    world.agentConfig,
    [
      'version: 1',
      `media_roots: [${world.mediaRoot}]`,
      `state_dir: ${world.stateDir}`,
      'log_level: info',
      'when_done: { eject: false }',
      'status_page: { listen: "127.0.0.1:0" }',
      'devices:',
      `  "${sim.url}":`,
      `    tls: { fingerprint_sha256: "${sim.fingerprintSha256}" }`,
      '',
    ].join('\n'),
  );
  const env = process.env;
  process.env = { ...env, RUNTIME_DIRECTORY: join(world.dir, 'run') };
  const agent = await startAgent(world, { entry });
  process.env = env;
  const pid = agent.child.pid;
  const history = jobHistory(world.stateDir);
  const sticks = [
    await profileStick('static-dual-stack.yaml', sim.url),
    await profileStick('eap-tls-pem.yaml', sim.url),
  ];
  const firstRequestMs = [];
  let rssAfterFirst;
  let idle;
  try {
    for (let cycle = 1; cycle <= cycles; cycle++) {
      sim.clearRequests();
      const stick = await insertTmpfsStick(
        join(world.dir, 'stages', String(cycle)),
        join(world.mediaRoot, 'BENCH'),
        sticks[cycle % 2],
      );
      const end = await history.waitForEnd(stick, cycle, JOB_TIMEOUT_MS);
      await stick.unmount();
      await stick.dispose();
      if (end === undefined)
        throw new Error(
          `cycle ${cycle}: no job end within ${JOB_TIMEOUT_MS / 1000} s; agent output: ${join(world.dir, 'agent.out')}`,
        );
      if (end.result !== 'CHANGED') throw new Error(`cycle ${cycle}: the job says ${end.result} (${end.summary})`);
      if (cycle <= FIRST_JOBS) {
        const first = sim.requests()[0];
        firstRequestMs.push(Date.parse(first.time) - stick.mountedAt);
        log(`daemon job ${cycle}: mount to first request ${firstRequestMs.at(-1)} ms`);
      }
      if (cycle === FIRST_JOBS) {
        rssAfterFirst = await rssSamples(pid, 5, 200);
        log(
          `daemon after ${FIRST_JOBS} jobs: RSS ${rssAfterFirst.map((r) => r.toFixed(0)).join(' ')} MiB; idle ${idleSeconds} s`,
        );
        const before = await processUsage(pid);
        const samples = [];
        for (let t = 0; t < idleSeconds; t += 5) {
          await sleep(Math.min(5, idleSeconds - t) * 1000);
          samples.push((await rssKiB(pid)) / 1024);
        }
        const after = await processUsage(pid);
        idle = { samples, cpuSeconds: after.cpuSeconds - before.cpuSeconds, wakeups: after.wakeups - before.wakeups };
        log(`daemon idle: RSS ${samples.map((r) => r.toFixed(0)).join(' ')} MiB, CPU ${idle.cpuSeconds.toFixed(2)} s`);
      }
      if (cycle % 50 === 0) log(`daemon cycle ${cycle}/${cycles}: RSS ${((await rssKiB(pid)) / 1024).toFixed(0)} MiB`);
    }
    const rssAfterAll = await rssSamples(pid, 5, 200);
    const growth =
      (summarize(rssAfterAll, 'MiB').median - summarize(rssAfterFirst, 'MiB').median) /
      summarize(rssAfterFirst, 'MiB').median;
    return {
      what: `mpprov run with NODE_OPTIONS="${await unitNodeOptions()}" (systemd/mpprov.service) and the status page on; tmpfs sticks bind-mounted under the media root, each a change (100 ms restarts)`,
      mount_to_first_request_ms: judged(summarize(firstRequestMs, 'ms'), '<', 100),
      idle_after_10_jobs: {
        seconds: idleSeconds,
        rss_mib: judged(summarize(idle.samples, 'MiB'), '<', 80),
        cpu_s: Number(idle.cpuSeconds.toFixed(3)),
        cpu_percent: Number(((idle.cpuSeconds / idleSeconds) * 100).toFixed(3)),
        wakeups: idle.wakeups,
      },
      rss_after_10_jobs_mib: summarize(rssAfterFirst, 'MiB'),
      [`rss_after_${cycles}_jobs_mib`]: summarize(rssAfterAll, 'MiB'),
      rss_growth_percent: judged({ unit: '%', runs: 1, median: Number((growth * 100).toFixed(1)) }, '<', 10),
    };
  } finally {
    await agent.stop();
    await sim.close();
    await world.cleanup();
  }
}
