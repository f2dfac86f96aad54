// The idle agent: resident memory and CPU seconds over a quiet period (default 60 s), with its
// mount watch and a profiles watch running. Targets: under 80 MiB resident, no busy polling
// (CPU time over the period close to zero, a handful of wake-ups: what remains is V8 settling its
// heap after start-up; a later window shows none at all).
//   node bench/daemon-idle.mjs [--seconds N]      (needs dist/: npm run build)
import { makeWorld, processUsage, sleep, startAgent } from './daemon-lib.mjs';

const seconds = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 60;
const world = await makeWorld({ profiles: true });
const agent = await startAgent(world);
try {
  await sleep(3_000); // start-up settles
  const before = await processUsage(agent.child.pid);
  await sleep(seconds * 1000);
  const after = await processUsage(agent.child.pid);
  const cpu = after.cpuSeconds - before.cpuSeconds;
  const rssMiB = after.rssKiB / 1024;
  console.log(
    JSON.stringify({
      bench: 'daemon-idle',
      seconds,
      rss_mib: Number(rssMiB.toFixed(1)),
      peak_rss_mib: Number((after.hwmKiB / 1024).toFixed(1)),
      cpu_seconds: Number(cpu.toFixed(3)),
      cpu_percent: Number(((cpu / seconds) * 100).toFixed(3)),
      // Voluntary context switches: a busy-polling process wakes many times a second.
      wakeups: after.wakeups - before.wakeups,
      target_rss_mib: 80,
      ok: rssMiB < 80 && cpu / seconds < 0.005,
    }),
  );
  if (!(rssMiB < 80 && cpu / seconds < 0.005)) process.exitCode = 1;
} finally {
  await agent.stop();
  await world.cleanup();
}
