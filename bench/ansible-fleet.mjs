// The Ansible paths against the CLI: 100 devices of a fleet-mode simulator (in this process), each
// given eth1's address, applied by (a) one `mpprov apply --concurrency 20`, (b) the collection's
// batch path (mpprov.mpprov.fleet, one ansible-playbook with one mpprov run), (c) the per-host
// module (one host per MP, forks 20: one mpprov process per host); each a first run (every device
// changes) and a no-change run. Targets (docs/ansible.md): the batch path within 1.5 x the CLI's
// first run, and under 3 s when nothing changes. Each figure comes with its CPU seconds (the whole
// process tree's, GNU time), which a machine loaded by others inflates far less than wall time;
// and ansible-playbook with one no-op task on localhost is timed too: the floor of any Ansible
// path. Needs Debian's ansible-core.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFleet } from '../dist/simulator/index.js';
import { repoRoot } from './daemon-lib.mjs';
import { judged, summarize } from './lib/stats.mjs';
import { timeProcessWithUsage } from './lib/timed-process.mjs';

const PASSWORD = 'bench-ansible-password';
const CONCURRENCY = 20;

function desiredStates(fleet, count) {
  return fleet.manifest.devices.slice(0, count).map((device) => ({
    name: `mp${device.index}`,
    url: device.url,
    username: 'admin',
    tls: { fingerprint_sha256: device.fingerprint_sha256 },
    interfaces: { eth1: { ipv4: { method: 'static', address: `192.0.2.${10 + (device.index % 200)}/24` } } },
  }));
}

export async function ansibleFleet({ count = 100, runs = 1, outageMs, entry, workDir, log }) {
  const fleet = await startFleet(count, { restartMs: outageMs, password: PASSWORD });
  try {
    const dir = join(workDir, 'ansible');
    await mkdir(join(dir, 'secrets'), { recursive: true });
    const mpprov = join(dir, 'mpprov');
    await writeFile(mpprov, `#!/bin/sh\nexec '${process.execPath}' '${entry}' "$@"\n`, { mode: 0o755 });
    await writeFile(join(dir, 'secrets/admin.pw'), `${PASSWORD}\n`, { mode: 0o600 });
    await writeFile(join(dir, 'agent.yaml'), 'version: 1\n');
    const points = desiredStates(fleet, count);
    // The CLI: the same desired states as one stick.
    const stick = {
      version: 1,
      monitoring_points: points.map((p) => ({ ...p, password_file: 'secrets/admin.pw' })),
    };
    await writeFile(join(dir, 'fleet.yaml'), JSON.stringify(stick));
    await writeFile(join(dir, 'credentials.json'), JSON.stringify({ bench_password: PASSWORD }), { mode: 0o600 });
    const engine = { mpprov_path: mpprov, agent_config: join(dir, 'agent.yaml'), restart_timeout: 60 };
    // The batch path: one play on localhost.
    const batch = [
      {
        hosts: 'localhost',
        connection: 'local',
        gather_facts: false,
        tasks: [
          {
            'mpprov.mpprov.fleet': {
              ...engine,
              state_dir: '{{ bench_state }}',
              concurrency: CONCURRENCY,
              monitoring_points: points.map((p) => ({ ...p, password: '{{ bench_password }}' })),
            },
          },
        ],
      },
    ];
    await writeFile(join(dir, 'batch.yml'), JSON.stringify(batch));
    const floor = [
      { hosts: 'localhost', connection: 'local', gather_facts: false, tasks: [{ 'ansible.builtin.ping': {} }] },
    ];
    await writeFile(join(dir, 'floor.yml'), JSON.stringify(floor));
    // The per-host module: one inventory host per MP.
    const hosts = Object.fromEntries(points.map((p) => [p.name, { bench_point: p }]));
    await writeFile(join(dir, 'inventory.json'), JSON.stringify({ all: { hosts } }));
    const perHost = [
      {
        hosts: 'all',
        connection: 'local',
        gather_facts: false,
        tasks: [
          {
            'mpprov.mpprov.monitoring_point': {
              ...engine,
              state_dir: '{{ bench_state }}',
              name: '{{ bench_point.name }}',
              url: '{{ bench_point.url }}',
              username: 'admin',
              password: '{{ bench_password }}',
              tls: '{{ bench_point.tls }}',
              interfaces: '{{ bench_point.interfaces }}',
            },
          },
        ],
      },
    ];
    await writeFile(join(dir, 'per-host.yml'), JSON.stringify(perHost));
    const env = {
      ...process.env,
      ANSIBLE_COLLECTIONS_PATH: join(repoRoot, 'integrations/ansible'),
      ANSIBLE_HOME: join(dir, 'home'),
      ANSIBLE_CONFIG: join(dir, 'ansible.cfg'),
      ANSIBLE_PYTHON_INTERPRETER: '/usr/bin/python3',
      ANSIBLE_FORKS: String(CONCURRENCY),
      ANSIBLE_NOCOLOR: '1',
      PYTHONDONTWRITEBYTECODE: '1',
    };
    await writeFile(join(dir, 'ansible.cfg'), '[defaults]\n');
    const ways = {
      cli: (state) => [
        process.execPath,
        [entry, 'apply', join(dir, 'fleet.yaml'), '--concurrency', String(CONCURRENCY), '--state-dir', state],
        { env: { ...process.env, MPPROV_AGENT_CONFIG: join(dir, 'agent.yaml') } },
      ],
      batch: (state) => [
        'ansible-playbook',
        [
          '-i',
          'localhost,',
          join(dir, 'batch.yml'),
          '-e',
          `@${join(dir, 'credentials.json')}`,
          '-e',
          `bench_state=${state}`,
        ],
        { env },
      ],
      per_host: (state) => [
        'ansible-playbook',
        [
          '-i',
          join(dir, 'inventory.json'),
          join(dir, 'per-host.yml'),
          '-e',
          `@${join(dir, 'credentials.json')}`,
          '-e',
          `bench_state=${state}`,
        ],
        { env },
      ],
    };
    const measured = {};
    const cpu = {};
    for (let i = 0; i < runs; i++) {
      for (const [way, command] of Object.entries(ways)) {
        for (const phase of ['first', 'no_change']) {
          // A first run starts from devices at their starting configuration; the no-change run follows it.
          if (phase === 'first') await Promise.all(fleet.devices.map((d) => d.reset()));
          const state = join(dir, `state-${way}-${i}`);
          const [cmd, args, options] = command(state);
          const run = await timeProcessWithUsage(cmd, args, options);
          if (run.status !== 0)
            throw new Error(`${way} ${phase}: exit ${run.status}: ${run.stdout.slice(-600)}${run.stderr.slice(-400)}`);
          (measured[`${way}_${phase}`] ??= []).push(run.wallMs);
          (cpu[`${way}_${phase}`] ??= []).push(run.cpuSeconds);
          log(
            `ansible N=${count} ${way} ${phase} r${i + 1}: wall ${run.wallMs.toFixed(0)} ms, cpu ${run.cpuSeconds.toFixed(2)} s`,
          );
        }
      }
      const run = await timeProcessWithUsage('ansible-playbook', ['-i', 'localhost,', join(dir, 'floor.yml')], { env });
      if (run.status !== 0) throw new Error(`the no-op playbook: exit ${run.status}: ${run.stdout.slice(-600)}`);
      (measured.ansible_floor ??= []).push(run.wallMs);
      (cpu.ansible_floor ??= []).push(run.cpuSeconds);
      log(
        `ansible N=${count} no-op playbook r${i + 1}: wall ${run.wallMs.toFixed(0)} ms, cpu ${run.cpuSeconds.toFixed(2)} s`,
      );
    }
    const figure = (key) => summarize(measured[key], 'ms');
    const cpuFigure = (key) => summarize(cpu[key], 's', 2);
    const cliFirst = figure('cli_first');
    const ratio = summarize(
      measured.batch_first.map((ms, i) => ms / measured.cli_first[i]),
      'ratio',
      2,
    );
    return {
      what: `${count} devices (outage ${outageMs} ms), concurrency/forks ${CONCURRENCY}: one mpprov apply, the batch path (mpprov.mpprov.fleet) and the per-host module (mpprov.mpprov.monitoring_point), each a first and a no-change run, with CPU seconds; and a no-op playbook, Ansible's floor`,
      devices: count,
      cli_first: cliFirst,
      cli_no_change: figure('cli_no_change'),
      batch_first: figure('batch_first'),
      batch_first_to_cli: judged(ratio, '<=', 1.5),
      batch_no_change: judged(figure('batch_no_change'), '<', 3000),
      per_host_first: figure('per_host_first'),
      per_host_no_change: figure('per_host_no_change'),
      ansible_floor: figure('ansible_floor'),
      cpu_cli_first: cpuFigure('cli_first'),
      cpu_cli_no_change: cpuFigure('cli_no_change'),
      cpu_batch_first: cpuFigure('batch_first'),
      cpu_batch_no_change: cpuFigure('batch_no_change'),
      cpu_per_host_first: cpuFigure('per_host_first'),
      cpu_per_host_no_change: cpuFigure('per_host_no_change'),
      cpu_ansible_floor: cpuFigure('ansible_floor'),
    };
  } finally {
    await fleet.close();
  }
}
