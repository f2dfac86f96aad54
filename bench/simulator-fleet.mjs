// Fleet-mode cost: start N simulated Monitoring Points in one process and report the start time
// and resident memory as one line of JSON. Targets: 200 devices in under 5 s and 300 MiB.
// Run after `npx tsc -p tsconfig.build.json`:  node bench/simulator-fleet.mjs [N]
import { performance } from 'node:perf_hooks';
import { request, Agent } from 'undici';
import { startFleet } from '../dist/simulator/index.js';

const count = Number(process.argv[2] ?? 200);
const targets = { start_ms: 5000, rss_mib: 300 };
const mib = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;

const rssBefore = process.memoryUsage().rss;
const started = performance.now();
const fleet = await startFleet(count, { serviceRateLimit: false });
const startMs = Math.round(performance.now() - started);
const rssStarted = process.memoryUsage().rss;

// One authenticated request per device, so every TLS context and handler has been exercised.
const agent = new Agent({ connect: { rejectUnauthorized: false }, connections: 1 });
const answered = await Promise.all(
  fleet.manifest.devices.map(async (d) => {
    const res = await request(`${d.url}/api/v1/interface/`, {
      dispatcher: agent,
      headers: { authorization: `Basic ${Buffer.from(`${d.username}:${d.password}`).toString('base64')}` },
    });
    await res.body.dump();
    return res.statusCode === 200;
  }),
);
const rssAfterRequests = process.memoryUsage().rss;
await agent.close();
await fleet.close();

const result = {
  bench: 'simulator-fleet',
  devices: count,
  start_ms: startMs,
  rss_mib: mib(rssAfterRequests),
  rss_started_mib: mib(rssStarted),
  rss_before_mib: mib(rssBefore),
  per_device_kib: Math.round((rssAfterRequests - rssBefore) / count / 1024),
  answered: answered.filter(Boolean).length,
  node: process.version,
  within_targets: startMs < targets.start_ms && mib(rssAfterRequests) < targets.rss_mib,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
