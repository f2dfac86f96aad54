// Fleet apply: one mpprov.yaml naming N simulated devices of a fleet-mode
// simulator (docs/simulator.md "Fleet mode", in this process), applied with --concurrency C.
// Per run: wall time, the apply process's CPU seconds and peak RSS (GNU time: the kernel's own
// accounting of the child), 429s the devices answered, and the ratio of the wall time to the
// physical ideal ceil(N/C) x (outage + floor), the floor being what a device needs beyond its
// outage at best (Node start, TLS and a few exchanges, one reconnect: ~150 ms).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFleet } from '../dist/simulator/index.js';
import { judged, summarize } from './lib/stats.mjs';
import { timeProcessWithUsage } from './lib/timed-process.mjs';

export const FLOOR_MS = 150;
const PASSWORD = 'bench-fleet-password';

function fleetYaml(fleet, count) {
  const lines = ['version: 1', 'monitoring_points:'];
  for (const device of fleet.manifest.devices.slice(0, count)) {
    lines.push(
      `  - name: mp${device.index}`,
      `    url: ${device.url}`,
      '    username: admin',
      '    password_file: secrets/admin.pw',
      `    tls: { fingerprint_sha256: "${device.fingerprint_sha256}" }`,
      '    interfaces:',
      '      eth1:',
      `        ipv4: { method: static, address: 192.0.2.${10 + (device.index % 200)}/24, gateway: 192.0.2.1, nameservers: [192.0.2.53] }`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** `cases`: [[N, concurrency], ...]; one fleet of the largest N serves every case. */
export async function fleetApply({ cases, runs, outageMs, entry, workDir, log }) {
  const largest = Math.max(...cases.map(([n]) => n));
  // The simulator's rate limit stays on (1 restart a second, 12 a minute per device): a client
  // that restarts a device twice in a row gets its 429, and that is counted.
  const fleet = await startFleet(largest, { restartMs: outageMs, password: PASSWORD });
  try {
    const agentConfig = join(workDir, 'agent.yaml');
    await writeFile(agentConfig, 'version: 1\n');
    const stick = join(workDir, 'fleet-stick');
    await mkdir(join(stick, 'secrets'), { recursive: true });
    await writeFile(join(stick, 'secrets/admin.pw'), `${PASSWORD}\n`, { mode: 0o600 });
    const results = {};
    for (const [count, concurrency] of cases) {
      const file = join(stick, `fleet-${count}.yaml`);
      await writeFile(file, fleetYaml(fleet, count));
      const devices = fleet.devices.slice(0, count);
      const ideal = Math.ceil(count / concurrency) * (outageMs + FLOOR_MS);
      const measured = [];
      for (let i = 0; i < runs; i++) {
        await Promise.all(devices.map((d) => d.reset()));
        for (const d of devices) d.clearRequests();
        const restartsBefore = devices.map((d) => d.state().restarts);
        const run = await timeProcessWithUsage(
          process.execPath,
          [entry, 'apply', file, '--concurrency', String(concurrency), '--state-dir', join(workDir, `state-${count}`)],
          {
            env: { ...process.env, MPPROV_AGENT_CONFIG: agentConfig, NO_COLOR: '1' },
          },
        );
        if (run.status !== 0 || !/^RESULT: CHANGED/m.test(run.stdout))
          throw new Error(
            `fleet apply N=${count} conc ${concurrency}: exit ${run.status}: ${run.stdout.slice(-400)}${run.stderr.slice(-400)}`,
          );
        const notRestartedOnce = devices.filter((d, k) => d.state().restarts - restartsBefore[k] !== 1).length;
        if (notRestartedOnce > 0)
          throw new Error(`fleet apply N=${count}: ${notRestartedOnce} device(s) not restarted exactly once`);
        const tooMany = devices.reduce((sum, d) => sum + d.requests().filter((r) => r.status === 429).length, 0);
        measured.push({ wallMs: run.wallMs, cpuSeconds: run.cpuSeconds, peakRssMiB: run.peakRssMiB, tooMany });
        log(
          `fleet N=${count} conc ${concurrency} r${i + 1}: wall ${run.wallMs.toFixed(0)} ms (ideal ${ideal}), CPU ${run.cpuSeconds.toFixed(2)} s, peak RSS ${run.peakRssMiB.toFixed(0)} MiB, 429s ${tooMany}`,
        );
      }
      const key = `n${count}_conc${concurrency}`;
      const ratio = summarize(
        measured.map((m) => m.wallMs / ideal),
        'ratio',
        2,
      );
      const rss = summarize(
        measured.map((m) => m.peakRssMiB),
        'MiB',
      );
      const tooMany = summarize(
        measured.map((m) => m.tooMany),
        'count',
        0,
      );
      const judge = count === 200 && concurrency === 32;
      results[key] = {
        devices: count,
        concurrency,
        ideal_ms: ideal,
        wall_ms: summarize(
          measured.map((m) => m.wallMs),
          'ms',
        ),
        cpu_s: summarize(
          measured.map((m) => m.cpuSeconds),
          's',
          2,
        ),
        peak_rss_mib: judge ? judged(rss, '<', 200) : rss,
        ratio_to_ideal: judge ? judged(ratio, '<=', 1.3) : ratio,
        answers_429: judge ? judged(tooMany, '==', 0, 'max') : tooMany,
      };
    }
    return {
      what: `apply of one file naming N devices of a fleet-mode simulator (outage ${outageMs} ms), --concurrency C; ideal = ceil(N/C) x (outage + ${FLOOR_MS} ms)`,
      outage_ms: outageMs,
      floor_ms: FLOOR_MS,
      ...results,
    };
  } finally {
    await fleet.close();
  }
}
