// Apply overhead against the vendor's curl sequence, and the no-change re-apply.
//
// One simulated device per outage length (restartMs 2600, 3000, 3400), each with the profiles'
// certificate and password, in this process: its hooks say to the millisecond when the device
// stopped and when it listened again, and its request log when the first probe got through.
// Per round, for each outage and each profile, `mpprov apply` (the whole process) and
// bench/vendor-curl.sh (the same change with curl) run one after the other on a device reset to
// its starting configuration, alternating which goes first. Overhead = wall time - outage;
// late after up = first successful request after the device listens again - that moment.
// After each mpprov run at 3000 ms the same file is applied again: NO CHANGE, whole process.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startSimulator } from '../dist/simulator/index.js';
import { profileDevice, profileStick, profilesDir } from '../soak/stick.mjs';
import { judged, mean, summarize } from './lib/stats.mjs';
import { timeProcess } from './lib/timed-process.mjs';

export const OUTAGES_MS = [2600, 3000, 3400];
const NO_CHANGE_OUTAGE_MS = 3000;

/**
 * The profiles measured, with the stanzas an administrator posts with curl for the same result
 * (service-api.md area C, flat bodies as admin-api-model.md fixes them) and the files uploaded.
 */
const PROFILES = {
  'peap-mschapv2': {
    file: 'peap-mschapv2.yaml',
    uploads: [['wpa_ca_cert', 'certs/radius-ca.pem']],
    stanzas: async () => [
      {
        name: 'eth1',
        family: 'inet',
        method: 'dhcp',
        wpa_key_mgmt: 'IEEE8021X',
        wpa_eap: 'PEAP',
        wpa_identity: 'mp01@corp.example',
        wpa_anonymous_identity: 'anonymous@corp.example',
        wpa_password: (await readFile(join(profilesDir, 'secrets/mp01-peap.pw'), 'utf8')).trim(),
        wpa_phase1: 'peapver=0',
        wpa_phase2: 'auth=MSCHAPV2',
        wpa_ca_cert: 'radius-ca.pem',
      },
    ],
  },
  'static-dual-stack': {
    file: 'static-dual-stack.yaml',
    uploads: [],
    stanzas: async () => {
      const link = { mtu: 1500, link_speed: 1000, link_duplex: 'full', link_autoneg: false };
      return [
        {
          name: 'eth1',
          family: 'inet',
          method: 'static',
          address: '198.51.100.20',
          netmask: '255.255.255.0',
          gateway: '198.51.100.1',
          dns_nameservers: ['198.51.100.53', '198.51.100.54'],
          dns_search: ['corp.example'],
          routes: [{ destination: '10.0.0.0/8', gateway: '198.51.100.254', metric: 100 }],
          ...link,
        },
        {
          name: 'eth1',
          family: 'inet6',
          method: 'static',
          address: '2001:db8:20::20',
          netmask: '64',
          gateway: '2001:db8:20::1',
          dns_nameservers: ['2001:db8:20::53'],
          routes: [{ destination: '2001:db8:ff00::/40', gateway: '2001:db8:20::fe' }],
          ...link,
        },
      ];
    },
  },
};

/** A device per outage length, with its restart and answering-again moments. */
async function startDevice(outageMs) {
  const events = { down: undefined, up: undefined };
  const sim = await startSimulator({
    ...(await profileDevice()),
    restartMs: outageMs,
    hooks: { restartStarted: () => (events.down = Date.now()), answeringAgain: () => (events.up = Date.now()) },
  });
  return { outageMs, sim, events };
}

/** The stick folder of a profile pointed at `device`, and the curl side's arguments for it. */
async function prepare(dir, name, profile, device) {
  const stick = join(dir, `${name}-${device.outageMs}`);
  for (const [path, content] of Object.entries(await profileStick(profile.file, device.sim.url))) {
    await mkdir(join(stick, path, '..'), { recursive: true });
    await writeFile(join(stick, path), content, { mode: 0o600 });
  }
  const curlArgs = [
    '--url',
    device.sim.url,
    '--user',
    'admin',
    '--password-file',
    join(stick, 'secrets/admin.pw'),
    '--cacert',
    join(profilesDir, 'certs/device-ca.pem'),
    '--wait-for',
    'eth1',
  ];
  for (const [slot, file] of profile.uploads) curlArgs.push('--upload', `${slot}=${join(profilesDir, file)}`);
  for (const [i, stanza] of (await profile.stanzas()).entries()) {
    const file = join(stick, `stanza-${i}.json`);
    await writeFile(file, JSON.stringify(stanza), { mode: 0o600 });
    await chmod(file, 0o600);
    curlArgs.push('--stanza', file);
  }
  return { config: join(stick, 'mpprov.yaml'), curlArgs, stateDir: join(dir, `state-${name}-${device.outageMs}`) };
}

function resultWord(stdout) {
  return /^RESULT: (CHANGED|NO CHANGE|FAILED)\b/m.exec(stdout)?.[1];
}

/** One run on a device reset to its start: wall, outage, overhead, late after up. */
async function measure(side, device, command, args, env, expectWord) {
  const { sim, events } = device;
  await sim.reset();
  sim.clearRequests();
  events.down = events.up = undefined;
  const restartsBefore = sim.state().restarts;
  const run = await timeProcess(command, args, { env });
  const what = `${side} (outage ${device.outageMs} ms)`;
  if (run.status !== 0)
    throw new Error(`${what} exited ${run.status}: ${run.stdout.slice(-400)}${run.stderr.slice(-400)}`);
  if (expectWord !== undefined && resultWord(run.stdout) !== expectWord)
    throw new Error(`${what}: RESULT ${resultWord(run.stdout)}, expected ${expectWord}`);
  const restarts = sim.state().restarts - restartsBefore;
  if (restarts !== 1 || events.down === undefined || events.up === undefined)
    throw new Error(`${what}: ${restarts} restart(s) seen, expected 1`);
  const firstOk = sim.requests().find((r) => Date.parse(r.time) >= events.up && r.status !== null && r.status < 300);
  if (firstOk === undefined) throw new Error(`${what}: no successful request after the device listened again`);
  const outageMs = events.up - events.down;
  return {
    wallMs: run.wallMs,
    outageMs,
    overheadMs: run.wallMs - outageMs,
    lateMs: Date.parse(firstOk.time) - events.up,
  };
}

/** The same file again on the device as the last run left it: nothing to change, no restart. */
async function measureNoChange(device, args, env) {
  const { sim } = device;
  const restartsBefore = sim.state().restarts;
  sim.clearRequests();
  const run = await timeProcess(process.execPath, args, { env });
  if (run.status !== 0 || resultWord(run.stdout) !== 'NO CHANGE')
    throw new Error(`re-apply: exit ${run.status}, RESULT ${resultWord(run.stdout)}, expected NO CHANGE`);
  const restarts = sim.state().restarts - restartsBefore;
  const changing = sim.requests().filter((r) => r.method !== 'GET').length;
  return { wallMs: run.wallMs, restarts, changingRequests: changing };
}

export async function applySweep({ rounds, entry, workDir, log }) {
  const devices = [];
  try {
    for (const outage of OUTAGES_MS) devices.push(await startDevice(outage));
    const agentConfig = join(workDir, 'agent.yaml');
    await writeFile(agentConfig, 'version: 1\n');
    const runs = {}; // `${side}|${profile}|${outage}` -> measurements
    const noChange = {}; // profile -> measurements
    const add = (key, value) => (runs[key] ??= []).push(value);
    const prepared = new Map();
    for (const device of devices) {
      for (const [name, profile] of Object.entries(PROFILES))
        prepared.set(`${name}|${device.outageMs}`, await prepare(workDir, name, profile, device));
    }
    // One run of each side first, not a sample: mpprov's code cache for `apply` is written by the
    // command's first run on a machine (src/cli/compile-cache.ts; validate-cold measures that miss),
    // and curl and bash get read into the page cache; the figures are those of every later run.
    const warmUp = prepared.get(`${Object.keys(PROFILES)[0]}|${devices[0].outageMs}`);
    const warmEnv = { ...process.env, MPPROV_AGENT_CONFIG: agentConfig, NO_COLOR: '1' };
    await measure(
      'mpprov apply (warm-up)',
      devices[0],
      process.execPath,
      [entry, 'apply', warmUp.config, '--state-dir', `${warmUp.stateDir}-warm-up`],
      warmEnv,
      'CHANGED',
    );
    await measure(
      'vendor-curl.sh (warm-up)',
      devices[0],
      'bash',
      [join(import.meta.dirname, 'vendor-curl.sh'), ...warmUp.curlArgs],
      warmEnv,
    );
    for (let round = 0; round < rounds; round++) {
      for (const device of devices) {
        for (const name of Object.keys(PROFILES)) {
          const p = prepared.get(`${name}|${device.outageMs}`);
          const env = { ...process.env, MPPROV_AGENT_CONFIG: agentConfig, NO_COLOR: '1' };
          const applyArgs = [entry, 'apply', p.config, '--state-dir', p.stateDir];
          const sides = [
            ['mpprov', () => measure('mpprov apply', device, process.execPath, applyArgs, env, 'CHANGED')],
            [
              'curl',
              () =>
                measure(
                  'vendor-curl.sh',
                  device,
                  'bash',
                  [join(import.meta.dirname, 'vendor-curl.sh'), ...p.curlArgs],
                  env,
                ),
            ],
          ];
          // Alternate who goes first: neither side always meets a machine that just did the other's work.
          if ((round + OUTAGES_MS.indexOf(device.outageMs)) % 2 === 1) sides.reverse();
          for (const [side, run] of sides) {
            const m = await run();
            add(`${side}|${name}|${device.outageMs}`, m);
            log(
              `apply r${round + 1} ${side.padEnd(6)} ${name} outage ${device.outageMs}: wall ${m.wallMs.toFixed(0)} overhead ${m.overheadMs.toFixed(0)} late ${m.lateMs} ms`,
            );
            if (side === 'mpprov' && device.outageMs === NO_CHANGE_OUTAGE_MS) {
              const again = await measureNoChange(device, applyArgs, env);
              (noChange[name] ??= []).push(again);
              log(
                `apply r${round + 1} re-apply ${name}: wall ${again.wallMs.toFixed(0)} ms, ${again.restarts} restart(s), ${again.changingRequests} changing request(s)`,
              );
            }
          }
        }
      }
    }
    return report(runs, noChange);
  } finally {
    await Promise.all(devices.map((d) => d.sim.close()));
  }
}

function report(runs, noChange) {
  const overhead = { mpprov: {}, curl: {} };
  const lateAfterUp = { mpprov: {}, curl: {} };
  const allOverheads = { mpprov: [], curl: [] };
  for (const side of ['mpprov', 'curl']) {
    for (const name of Object.keys(PROFILES)) {
      overhead[side][name] = {};
      lateAfterUp[side][name] = {};
      for (const outage of OUTAGES_MS) {
        const list = runs[`${side}|${name}|${outage}`];
        const figure = summarize(
          list.map((m) => m.overheadMs),
          'ms',
        );
        overhead[side][name][`outage_${outage}_ms`] = side === 'mpprov' ? judged(figure, '<', 250) : figure;
        lateAfterUp[side][name][`outage_${outage}_ms`] = summarize(
          list.map((m) => m.lateMs),
          'ms',
        );
        allOverheads[side].push(...list.map((m) => m.overheadMs));
      }
    }
  }
  const ratio = mean(allOverheads.mpprov) / mean(allOverheads.curl);
  const measuredOutages = Object.values(runs)
    .flat()
    .map((m) => m.outageMs);
  return {
    what: 'wall time of the whole process minus the outage the simulator logged (restart begun to listening again), per profile and outage length; the curl script is bench/vendor-curl.sh, interleaved',
    outage_logged_ms: summarize(measuredOutages, 'ms'),
    overhead_ms: overhead,
    late_after_up_ms: lateAfterUp,
    mean_overhead_ms: { mpprov: Math.round(mean(allOverheads.mpprov)), curl: Math.round(mean(allOverheads.curl)) },
    mean_overhead_ratio: judged(
      { unit: 'ratio', runs: allOverheads.mpprov.length, median: Number(ratio.toFixed(2)) },
      '<=',
      0.35,
    ),
    no_change_reapply: Object.fromEntries(
      Object.entries(noChange).map(([name, list]) => [
        name,
        {
          wall_ms: judged(
            summarize(
              list.map((m) => m.wallMs),
              'ms',
            ),
            '<',
            200,
          ),
          restarts: judged(
            summarize(
              list.map((m) => m.restarts),
              'count',
              0,
            ),
            '==',
            0,
            'max',
          ),
          changing_requests: summarize(
            list.map((m) => m.changingRequests),
            'count',
            0,
          ),
        },
      ]),
    ),
  };
}
