import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startFleet, type Fleet } from '../../src/simulator/index.js';
import { cliPath } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';
import { ansibleEnv, examplesDir, requireTool, runTool, type ToolRun } from './ansible-run.js';

/**
 * Devices that lie, through real ansible-playbook runs of the per-host module: one closes the
 * connection in the middle of every POST, one answers every GET with a 64 MiB body, one answers
 * slowly, one is healthy. Each failing host fails alone with one sentence; the others go on.
 */

const RUN_TIMEOUT = 240_000;
const HOSTS = ['mp-0', 'mp-1', 'mp-2', 'mp-3'] as const;

let fleet: Fleet;
let work: string;

interface HostResult {
  changed: boolean;
  failed?: boolean;
  msg?: string;
  outcome?: string;
}

beforeAll(async () => {
  requireTool('ansible-playbook', 'the lying-device test drives real playbook runs');
  fleet = await startFleet(HOSTS.length, { restartMs: 100, serviceRateLimit: false });
  work = tempFolder('ansible-lying');
  writeFileSync(join(work, 'mpprov'), `#!/bin/sh\nexec '${process.execPath}' '${cliPath}' "$@"\n`);
  chmodSync(join(work, 'mpprov'), 0o755);
  const hosts = Object.fromEntries(
    fleet.devices.map((sim, i) => [
      `mp-${i}`,
      { mp_url: sim.url, mp_fingerprint: sim.fingerprintSha256, mp_password: sim.password, ansible_connection: 'local' },
    ]),
  );
  writeFileSync(join(work, 'inventory.yml'), stringify({ all: { hosts } }), { mode: 0o600 });
  writeFileSync(
    join(work, 'play.yml'),
    stringify([
      {
        hosts: 'all',
        gather_facts: false,
        tasks: [
          {
            'mpprov.mpprov.monitoring_point': {
              name: '{{ inventory_hostname }}',
              url: '{{ mp_url }}',
              password: '{{ mp_password }}',
              tls: { fingerprint_sha256: '{{ mp_fingerprint }}' },
              interfaces: { eth1: { ipv4: { method: 'static', address: "198.51.100.9/{{ mp_prefix | default(24) }}" } } },
              mpprov_path: `{{ mp_mpprov | default('${join(work, 'mpprov')}') }}`,
              state_dir: join(work, 'state'),
              restart_timeout: 30,
              lock_wait: '{{ mp_lock_wait | default(600) }}',
            },
          },
        ],
      },
    ]),
  );
});

afterAll(async () => {
  await fleet?.close();
});

function play(args: readonly string[]): Promise<ToolRun> {
  return runTool('ansible-playbook', ['-i', join(work, 'inventory.yml'), join(work, 'play.yml'), ...args], {
    cwd: work,
    env: { ...ansibleEnv(work), ANSIBLE_STDOUT_CALLBACK: 'json', ANSIBLE_CONFIG: join(examplesDir, 'ansible.cfg') },
  });
}

describe('the per-host module against devices that lie', () => {
  it('fails each lying device alone, in one sentence, and changes the others', async () => {
    fleet.devices[1]!.setFaults(['drop=1@POST *']);
    fleet.devices[2]!.setFaults(['huge-body=64MiB@GET *']);
    // Slow but within the 1 s the restart wait gives each probe (a device slower than that is reported lost).
    fleet.devices[3]!.setFaults(['latency=600ms']);
    const run = await runTool('ansible-playbook', ['-i', join(work, 'inventory.yml'), join(work, 'play.yml')], {
      cwd: work,
      env: { ...ansibleEnv(work), ANSIBLE_STDOUT_CALLBACK: 'json', ANSIBLE_CONFIG: join(examplesDir, 'ansible.cfg') },
    });
    expect(run.code, run.stderr).toBe(2);
    const parsed = JSON.parse(run.stdout) as {
      plays: { tasks: { hosts: Record<string, HostResult> }[] }[];
      stats: Record<string, { ok: number; changed: number; failures: number }>;
    };
    const results = parsed.plays[0]!.tasks[0]!.hosts;
    expect(Object.keys(results).sort()).toEqual([...HOSTS]);
    expect(Object.keys(parsed.stats).sort()).toEqual([...HOSTS]);
    for (const host of ['mp-0', 'mp-3']) {
      expect(results[host], `${host}: ${results[host]?.msg ?? ''}`).toMatchObject({ changed: true, outcome: 'changed' });
      expect(parsed.stats[host], host).toMatchObject({ failures: 0, changed: 1 });
    }
    for (const host of ['mp-1', 'mp-2']) {
      expect(results[host]!.failed, host).toBe(true);
      expect(parsed.stats[host], host).toMatchObject({ failures: 1 });
      const msg = results[host]!.msg ?? '';
      expect(msg, host).toMatch(new RegExp(`^${host}: FAILED: [^\\n]{10,400}$`));
      expect(msg).not.toMatch(/Traceback|MODULE FAILURE/);
    }
    // The huge-body device failed reading: nothing but GETs were sent to it, so nothing changed.
    expect(fleet.devices[2]!.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    expect(results['mp-2']!.changed).toBe(false);
    // changed only when a changing request was sent: every host that says changed had one.
    const changing = fleet.devices.map((sim) => sim.requests().filter((r) => r.method !== 'GET').length);
    expect(HOSTS.filter((host, i) => results[host]!.changed && changing[i] === 0)).toEqual([]);
    expect(changing[1], 'the POST that mp-1 dropped was sent').toBeGreaterThan(0);
    for (const sim of fleet.devices) sim.setFaults([]);
    for (const sim of fleet.devices) sim.clearRequests();
    // A second run: the healthy ones change nothing, the ones that lied are configured now.
    const again = await runTool('ansible-playbook', ['-i', join(work, 'inventory.yml'), join(work, 'play.yml')], {
      cwd: work,
      env: { ...ansibleEnv(work), ANSIBLE_STDOUT_CALLBACK: 'json', ANSIBLE_CONFIG: join(examplesDir, 'ansible.cfg') },
    });
    expect(again.code, again.stdout).toBe(0);
    const second = (JSON.parse(again.stdout) as typeof parsed).plays[0]!.tasks[0]!.hosts;
    expect(second['mp-0']).toMatchObject({ changed: false });
    expect(second['mp-3']).toMatchObject({ changed: false });
    expect(fleet.devices[0]!.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    for (const host of ['mp-1', 'mp-2']) expect(second[host], host).toMatchObject({ changed: true, outcome: 'changed' });
    for (const secret of fleet.devices.map((sim) => sim.password)) {
      expect(run.stdout.includes(secret) || again.stdout.includes(secret)).toBe(false);
    }
  }, RUN_TIMEOUT);

  it('a lock held by a stuck run bounds the wait (lock_wait) and names it; once that run is dead the lock is free', async () => {
    const sim = fleet.devices[0]!;
    const locks = join(work, 'state/locks');
    mkdirSync(locks, { recursive: true });
    const file = join(locks, `${new URL(sim.url).host.replace(':', '_')}.lock`);
    expect(existsSync(file), 'the first test ran mp-0 with this lock file').toBe(true);
    writeFileSync(file, 'a stuck run on another controller\n');
    // Another run that holds the device's lock and never finishes: a real flock(2) holder, one
    // process (--no-fork), so that killing it is the run dying.
    const holder = spawn('flock', ['--no-fork', '--exclusive', file, 'sleep', '300'], { stdio: 'ignore' });
    const gone = new Promise<void>((resolve) => holder.on('close', () => resolve()));
    try {
      await new Promise((r) => setTimeout(r, 500));
      sim.setFaults([]);
      sim.clearRequests();
      const busy = await play(['--limit', 'mp-0', '-e', 'mp_lock_wait=2']);
      expect(busy.code, busy.stdout).toBe(2);
      const result = (JSON.parse(busy.stdout) as { plays: { tasks: { hosts: Record<string, HostResult> }[] }[] }).plays[0]!
        .tasks[0]!.hosts['mp-0']!;
      expect(result).toMatchObject({ failed: true, changed: false });
      expect(result.msg).toBe(
        "mp-0: FAILED: another run holds this device's lock (a stuck run on another controller) and did not finish within 2 s; this run sent nothing to it",
      );
      expect(sim.requests()).toEqual([]);
    } finally {
      holder.kill('SIGKILL');
      await gone;
    }
    const after = await play(['--limit', 'mp-0', '-e', 'mp_lock_wait=2']);
    expect(after.code, after.stdout).toBe(0);
  }, RUN_TIMEOUT);

  it('mpprov SIGKILLed between its POST and the restart: the task fails in one sentence, the next run finishes the job', async () => {
    const sim = fleet.devices[0]!;
    const pidFile = join(work, 'mpprov.pid');
    writeFileSync(join(work, 'mpprov-pid'), `#!/bin/sh\necho $$ > '${pidFile}'\nexec '${join(work, 'mpprov')}' "$@"\n`);
    chmodSync(join(work, 'mpprov-pid'), 0o755);
    sim.clearRequests();
    // The restart request hangs: mpprov has sent its POST and waits for the device's answer.
    sim.setFaults(['latency=20s@PUT /api/v1/service/*']);
    const running = play(['--limit', 'mp-0', '-e', 'mp_prefix=25', '-e', `mp_mpprov=${join(work, 'mpprov-pid')}`]);
    for (let i = 0; i < 600 && !sim.requests().some((r) => r.method === 'PUT'); i += 1)
      await new Promise((r) => setTimeout(r, 100));
    expect(sim.requests().map((r) => r.method)).toContain('POST');
    process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGKILL');
    const killed = await running;
    expect(killed.code, killed.stdout).toBe(2);
    const result = (JSON.parse(killed.stdout) as { plays: { tasks: { hosts: Record<string, HostResult> }[] }[] }).plays[0]!
      .tasks[0]!.hosts['mp-0']!;
    expect(result.msg).toBe('mpprov was killed by signal 9 (SIGKILL)');
    sim.setFaults([]);
    const after = await play(['--limit', 'mp-0', '-e', 'mp_prefix=25']);
    expect(after.code, after.stdout).toBe(0);
    // Nothing left pending: the pending configuration is the active one (what only a view shows aside).
    const { active, pending } = sim.state().interfaces;
    const configOf = (view: unknown): string =>
      JSON.stringify(view, (key, value: unknown) => (['config_state', 'dot1x_state', 'in_use'].includes(key) ? undefined : value));
    expect(configOf(pending)).toBe(configOf(active));
    expect(configOf(active)).toContain('"netmask":"255.255.255.128"');
  }, RUN_TIMEOUT);
});
