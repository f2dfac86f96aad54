// Mount to first request: a FAT stick is mounted (fusefat) under the agent's media root; the time
// from the mount appearing in the mount table to the simulated device's first request is measured,
// several runs against an agent that is already running. Target: median under 1 s.
//   node bench/daemon-mount-latency.mjs [--runs N]      (needs dist/: npm run build)
// Prints one JSON line per run and a summary line.
import { join } from 'node:path';
import { startSimulator } from '../dist/simulator/index.js';
import { jobEnds, makeFatImage, makeWorld, median, mountFat, requireFatTools, startAgent, stickFiles, waitFor } from './daemon-lib.mjs';

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 7;
requireFatTools();
const world = await makeWorld();
const agent = await startAgent(world);
const latencies = [];
try {
  for (let i = 0; i < runs; i++) {
    const sim = await startSimulator({ restartMs: 200 });
    const image = join(world.dir, `stick${i}.img`);
    await makeFatImage(image, `BENCH${i}`, stickFiles(`mp${i}`, sim));
    const before = await jobEnds(world.stateDir);
    const stick = await mountFat(image, join(world.mediaRoot, `BENCH${i}`), join(world.dir, 'fusefat.log'));
    await waitFor(() => sim.requests().length > 0, 10_000, 'the first request');
    const first = Date.parse(sim.requests()[0].time);
    await waitFor(async () => (await jobEnds(world.stateDir)) > before, 60_000, 'the job to end');
    const jobMs = Date.now() - stick.mountedAt;
    await stick.unmount();
    await sim.close();
    latencies.push(first - stick.mountedAt);
    console.log(JSON.stringify({ bench: 'daemon-mount-to-first-request', run: i + 1, ms: first - stick.mountedAt, job_ms: jobMs }));
  }
} finally {
  await agent.stop();
  await world.cleanup();
}
const med = median(latencies);
console.log(JSON.stringify({ bench: 'daemon-mount-to-first-request', runs, median_ms: med, min_ms: Math.min(...latencies), max_ms: Math.max(...latencies), target_ms: 1000, ok: med < 1000 }));
if (!(med < 1000)) process.exitCode = 1;
