// Fleet apply with the monitoring service: one mpprov.yaml naming N devices of a fleet-mode
// simulator whose MPs the simulated service follows (outage, then UNAVAILABLE until `reconnect`
// after the device answers again), applied with --concurrency C and agent.yaml's service block.
// Two rows per N: confirmation only (no paths), and one path per MP (created, then waited on until
// its first data). Requests are counted from the simulated service's own request log.
//   confirm: wall <= 1.3 x (ceil(N/C) x (outage + 150 ms) + reconnect), requests <= N/20 + 20, no 429
//   paths:   creates == N and the rest <= N/20 + 20, wall <= 1.3 x max(that ideal, requests / 5 s)
//            + the first-data delay, no 429
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFleet } from '../dist/simulator/index.js';
import { startSimulatedService } from '../dist/simulator/service/index.js';
import { FLOOR_MS } from './fleet-apply.mjs';
import { judged, summarize } from './lib/stats.mjs';
import { timeProcess } from './lib/timed-process.mjs';

const PASSWORD = 'bench-fleet-service-password';
const profileCerts = new URL('../profiles/certs/', import.meta.url);
/** One certificate for every device, pinned once in agent.yaml's defaults. */
const FLEET_CERTIFICATE = {
  certificatePem: await readFile(new URL('device-https-cert.pem', profileCerts), 'utf8'),
  privateKeyPem: await readFile(new URL('device-https-key.pem', profileCerts), 'utf8'),
};
const HOSTNAME = 'fleet-mp';
/** The service's documented limit: 50 requests per 10 s, so 5 a second at best. */
const REQUESTS_PER_S = 5;

/**
 * One line per MP: a stick is at most 256 KiB, and 1 000 MPs in block style are more. The
 * password and the pin are agent.yaml's defaults (the whole fleet serves one certificate).
 */
function fleetYaml(fleet, count, withPaths) {
  const lines = ['version: 1', 'monitoring_points:'];
  for (const [index, device] of fleet.manifest.devices.slice(0, count).entries()) {
    const address = `192.0.2.${10 + (index % 200)}/24`;
    // A documentation address as the path's target: data for the simulated service, never connected to.
    const paths = withPaths ? ', paths: [{ target: 192.0.2.80 }]' : '';
    lines.push(
      `  - { name: ${HOSTNAME}-${index + 1}, url: "${device.url}"${paths}, interfaces: { eth1: { ipv4: { method: static, address: ${address}, gateway: 192.0.2.1 } } } }`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** agent.yaml's defaults for the fleet: the admin password and the fleet's one certificate pinned. */
function defaultsYaml(fleet, stick) {
  return `defaults: { username: admin, password_file: ${join(stick, 'secrets/admin.pw')}, tls: { fingerprint_sha256: "${fleet.manifest.devices[0].fingerprint_sha256}" } }`;
}

/**
 * `sizes`: the N to measure (each with its own fleet); `runs` per row. The service is started
 * afresh for every run (paths, once created, stay), the devices reset.
 */
export async function fleetService({
  sizes,
  concurrency,
  runs,
  outageMs,
  reconnectMs,
  pathDataMs,
  entry,
  workDir,
  log,
}) {
  const results = {};
  for (const count of sizes) {
    // The fleet's hooks follow whichever service the run started.
    let setup;
    const hooks = {
      restartStarted: (index) => setup?.hooks.restartStarted(index),
      answeringAgain: (index) => setup?.hooks.answeringAgain(index),
      managementDot1xFailed: (index) => setup?.hooks.managementDot1xFailed(index),
    };
    const fleet = await startFleet(count, { restartMs: outageMs, password: PASSWORD, hooks, ...FLEET_CERTIFICATE });
    try {
      const stick = join(workDir, `fleet-service-${count}`);
      await mkdir(join(stick, 'secrets'), { recursive: true });
      await writeFile(join(stick, 'secrets/admin.pw'), `${PASSWORD}\n`, { mode: 0o600 });
      const applyIdeal = Math.ceil(count / concurrency) * (outageMs + FLOOR_MS) + reconnectMs;
      for (const withPaths of [false, true]) {
        const file = join(stick, withPaths ? 'paths.yaml' : 'confirm.yaml');
        await writeFile(file, fleetYaml(fleet, count, withPaths));
        const measured = [];
        for (let i = 0; i < runs; i++) {
          setup = await startSimulatedService({ devices: count, hostname: HOSTNAME, reconnectMs, pathDataMs });
          try {
            await Promise.all(fleet.devices.map((d) => d.reset()));
            measured.push(await oneRun({ setup, fleet, count, concurrency, withPaths, file, stick, entry, run: i }));
          } finally {
            await setup.service.close();
          }
          const m = measured.at(-1);
          log(
            `fleet+service N=${count} conc ${concurrency} ${withPaths ? 'one path per MP' : 'confirmation only'} r${i + 1}: wall ${m.wallMs.toFixed(0)} ms (apply ideal ${applyIdeal}), requests ${m.requests} (creates ${m.creates}, rest ${m.requests - m.creates}), 429s ${m.tooMany}; by kind ${JSON.stringify(m.kinds)}`,
          );
        }
        results[`n${count}_${withPaths ? 'one_path' : 'confirm'}`] = row({
          count,
          concurrency,
          withPaths,
          applyIdeal,
          pathDataMs,
          measured,
        });
      }
      // The same apply without the service block, on the same machine at the same time: what the
      // service part adds is the difference (a busy machine slows both alike).
      const alone = [];
      for (let i = 0; i < runs; i++) {
        await Promise.all(fleet.devices.map((d) => d.reset()));
        alone.push(await applyAlone({ fleet, count, concurrency, stick, entry, run: i }));
        log(`fleet N=${count} conc ${concurrency} without the service r${i + 1}: wall ${alone.at(-1).toFixed(0)} ms`);
      }
      results[`n${count}_apply_alone`] = {
        devices: count,
        concurrency,
        ideal_ms: applyIdeal - reconnectMs,
        wall_ms: summarize(alone, 'ms'),
      };
    } finally {
      await fleet.close();
    }
  }
  return {
    what: `apply of one file naming N devices of a fleet-mode simulator with the simulated service (outage ${outageMs} ms, reconnect ${reconnectMs} ms, a path's first data ${pathDataMs} ms), --concurrency ${concurrency}; apply ideal = ceil(N/C) x (outage + ${FLOOR_MS} ms) + reconnect`,
    outage_ms: outageMs,
    reconnect_ms: reconnectMs,
    path_data_ms: pathDataMs,
    ...results,
  };
}

async function applyAlone({ fleet, count, concurrency, stick, entry, run }) {
  const file = join(stick, 'alone.yaml');
  await writeFile(file, fleetYaml(fleet, count, false));
  const agentYaml = join(stick, 'agent-alone.yaml');
  await writeFile(agentYaml, `version: 1\n${defaultsYaml(fleet, stick)}\n`);
  const state = join(stick, `state-alone-${run}`);
  const result = await timeProcess(
    process.execPath,
    [entry, 'apply', file, '--concurrency', String(concurrency), '--agent-config', agentYaml, '--state-dir', state],
    { env: { ...process.env, NO_COLOR: '1' } },
  );
  if (result.status !== 0)
    throw new Error(
      `fleet N=${count} without the service: exit ${result.status}: ${result.stdout.slice(-600)}${result.stderr.slice(-400)}`,
    );
  return result.wallMs;
}

async function oneRun({ setup, fleet, count, concurrency, withPaths, file, stick, entry, run }) {
  const { service } = setup;
  const tokenFile = join(stick, 'service.token');
  await writeFile(tokenFile, `${service.token}\n`, { mode: 0o600 });
  await writeFile(join(stick, 'service-ca.pem'), service.caPem);
  const agentYaml = join(stick, 'agent.yaml');
  await writeFile(
    agentYaml,
    [
      'version: 1',
      defaultsYaml(fleet, stick),
      'service:',
      `  url: ${service.url}`,
      `  token_file: ${tokenFile}`,
      `  tls: { ca: ${join(stick, 'service-ca.pem')} }`,
      '  wait_connected_s: 600',
      '  wait_measuring_s: 1200',
      '',
    ].join('\n'),
  );
  service.clearRequests();
  const state = join(stick, `state-${withPaths ? 'paths' : 'confirm'}-${run}`);
  const startedAt = Date.now();
  const result = await timeProcess(
    process.execPath,
    [entry, 'apply', file, '--concurrency', String(concurrency), '--agent-config', agentYaml, '--state-dir', state],
    { env: { ...process.env, NO_COLOR: '1' } },
  );
  // Exit 0, not 3: every MP confirmed connected and, with paths, every path confirmed measuring.
  const resultLine = /^RESULT: .*$/m.exec(result.stdout)?.[0] ?? '';
  if (result.status !== 0 || !resultLine.startsWith('RESULT: CHANGED'))
    throw new Error(
      `fleet+service N=${count}${withPaths ? ' with paths' : ''}: exit ${result.status}: ${result.stdout.slice(-600)}${result.stderr.slice(-400)}`,
    );
  const requests = service.requests();
  // MPPROV_BENCH_SERVICE_LOG=DIR: each run's requests as the service saw them (kind, status, ms
  // since the run started), to see where a row's time goes.
  const logDir = process.env.MPPROV_BENCH_SERVICE_LOG;
  if (logDir !== undefined && logDir !== '') {
    const timeline = requests.map((r) => ({ ms: r.atMs - startedAt, kind: r.kind, status: r.status }));
    await writeFile(
      join(logDir, `service-${count}-${withPaths ? 'paths' : 'confirm'}-r${run + 1}.json`),
      `${JSON.stringify({ wallMs: result.wallMs, timeline })}\n`,
    );
  }
  const creates = requests.filter((r) => r.kind === 'path-create').length;
  const tooMany = requests.filter((r) => r.status === 429).length;
  return { wallMs: result.wallMs, requests: requests.length, creates, tooMany, kinds: service.requestCounts() };
}

function row({ count, concurrency, withPaths, applyIdeal, pathDataMs, measured }) {
  const wall = summarize(
    measured.map((m) => m.wallMs),
    'ms',
  );
  const requests = summarize(
    measured.map((m) => m.requests),
    'count',
    0,
  );
  const rest = summarize(
    measured.map((m) => m.requests - m.creates),
    'count',
    0,
  );
  const creates = summarize(
    measured.map((m) => m.creates),
    'count',
    0,
  );
  const tooMany = summarize(
    measured.map((m) => m.tooMany),
    'count',
    0,
  );
  const budget = count / 20 + 20;
  if (!withPaths) {
    return {
      devices: count,
      concurrency,
      ideal_ms: applyIdeal,
      wall_ms: judged(wall, '<=', Math.round(1.3 * applyIdeal)),
      ratio_to_ideal: summarize(
        measured.map((m) => m.wallMs / applyIdeal),
        'ratio',
        2,
      ),
      service_requests: judged(requests, '<=', budget, 'max'),
      answers_429: judged(tooMany, '==', 0, 'max'),
    };
  }
  // The creates cannot go faster than the limit allows: the ideal is the larger of the apply and
  // the whole run's requests at 5 a second, then one first-data delay for the last path created.
  const requestIdeal = Math.round((Math.max(...measured.map((m) => m.requests)) / REQUESTS_PER_S) * 1000);
  const ideal = Math.max(applyIdeal, requestIdeal);
  return {
    devices: count,
    concurrency,
    ideal_ms: ideal,
    apply_ideal_ms: applyIdeal,
    requests_ideal_ms: requestIdeal,
    wall_ms: judged(wall, '<=', Math.round(1.3 * ideal + pathDataMs)),
    ratio_to_ideal: summarize(
      measured.map((m) => m.wallMs / ideal),
      'ratio',
      2,
    ),
    path_creates: judged(creates, '==', count, 'max'),
    other_service_requests: judged(rest, '<=', budget, 'max'),
    answers_429: judged(tooMany, '==', 0, 'max'),
  };
}
