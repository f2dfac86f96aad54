import { mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startFleet, type Fleet, type SimulatorHandle } from '../../src/simulator/index.js';
import { cliPath, repoRoot } from '../support/run-cli.js';
import { stickYaml } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';
import {
  ansibleEnv,
  collectionDir,
  examplesDir,
  playRecap,
  requireTool,
  runTool,
  type RecapCounts,
  type ToolRun,
} from './ansible-run.js';

/**
 * The collection as a network team runs it from Ansible or AWX: the shipped examples (one play for
 * every site, the inventory plugin over mpprov's inventory file, credentials as extra vars) against
 * 20 simulated MPs in four sites over real HTTPS, with the real mpprov as the modules' engine.
 * lab.yml turns the simulated fleet's manifest into the inventory, as the examples' README says.
 */

const DEVICES = 20;
const SITES = ['berlin', 'hamburg', 'munich', 'cologne'];
const HOSTS = Array.from({ length: DEVICES }, (_, i) => `mp-${i}`);
const RUN_TIMEOUT = 300_000;
const WRONG_PASSWORD = 'Wrong-Admin-Password-55';
const packageVersion = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;

let fleet: Fleet;
let work: string;
let lab: string;
let dot1xPassword: string;
/** Every byte Ansible printed in this file, searched for secrets at the end. */
const printed: string[] = [];

beforeAll(async () => {
  for (const tool of ['ansible-playbook', 'ansible-doc', 'ansible-galaxy', 'ansible'])
    requireTool(tool, 'the Ansible collection test runs the shipped examples with it');
  fleet = await startFleet(DEVICES, { restartMs: 100, serviceRateLimit: false });
  work = tempFolder('ansible');
  lab = join(work, 'lab');
  mkdirSync(lab);
  writeFileSync(join(lab, 'manifest.json'), JSON.stringify(fleet.manifest), { mode: 0o600 });
  // The controller's mpprov: the command package.json's bin names (tsc's build with MPPROV_TEST_CLI=dist).
  writeFileSync(join(work, 'mpprov'), `#!/bin/sh\nexec '${process.execPath}' '${cliPath}' "$@"\n`);
  chmodSync(join(work, 'mpprov'), 0o755);
  const made = await runTool('ansible-playbook', [join(examplesDir, 'lab.yml'), '-e', `mpprov_lab_dir=${lab}`], {
    cwd: examplesDir,
    env: ansibleEnv(work),
  });
  printed.push(made.stdout, made.stderr);
  if (made.code !== 0) throw new Error(`lab.yml failed:\n${made.stdout}\n${made.stderr}`);
  dot1xPassword = readFileSync(join(lab, 'dot1x.pw'), 'utf8').trim();
}, RUN_TIMEOUT);

afterAll(async () => {
  await fleet?.close();
});

function device(index: number): SimulatorHandle {
  const sim = fleet.devices[index];
  if (sim === undefined) throw new Error(`the fleet has no device ${index}`);
  return sim;
}

interface PlaybookOptions {
  playbook?: string;
  stateDir?: string;
  home?: string;
  credentials?: string;
  env?: NodeJS.ProcessEnv;
}

function playbook(args: readonly string[], options: PlaybookOptions = {}): Promise<ToolRun> {
  const env = { ...ansibleEnv(work), ...options.env };
  if (options.home !== undefined) env.ANSIBLE_HOME = options.home;
  const all = [
    '-i',
    join(lab, 'fleet.mpprov.yml'),
    join(examplesDir, options.playbook ?? 'provision-fleet.yml'),
    '-e',
    `@${options.credentials ?? join(lab, 'credentials.yml')}`,
    '-e',
    `mpprov_executable=${join(work, 'mpprov')}`,
    '-e',
    `mpprov_state_dir=${options.stateDir ?? join(work, 'state')}`,
    '-e',
    'mpprov_restart_timeout=30',
    ...args,
  ];
  return runTool('ansible-playbook', all, { cwd: examplesDir, env }).then((run) => {
    printed.push(run.stdout, run.stderr);
    return run;
  });
}

function clearRequests(): void {
  for (const sim of fleet.devices) sim.clearRequests();
}

/** Every request since clearRequests() that could change a device (anything but GET). */
function changingRequests(): string[] {
  return fleet.devices.flatMap((sim, i) =>
    sim
      .requests()
      .filter((r) => r.method !== 'GET')
      .map((r) => `mp-${i}: ${r.method} ${r.path}`),
  );
}

/** A view of interfaces without what only a view shows (its state, addresses in use, 802.1X state). */
function configOf(view: Record<string, unknown>[]): unknown {
  return JSON.parse(
    JSON.stringify(view, (key, value: unknown) =>
      ['config_state', 'dot1x_state', 'in_use'].includes(key) ? undefined : value,
    ),
  );
}

function restarts(): number[] {
  return fleet.devices.map((sim) => sim.state().restarts);
}

function recapOf(run: ToolRun): Record<string, RecapCounts> {
  const recap = playRecap(run.stdout);
  expect(Object.keys(recap).sort(), `PLAY RECAP of:\n${run.stdout}\n${run.stderr}`).toEqual(
    [...HOSTS, 'localhost'].sort(),
  );
  return recap;
}

/** The custom stats line of the recap (show_custom_stats in the examples' ansible.cfg). */
function customStats(run: ToolRun): Record<string, unknown> {
  const line = run.stdout.split('\n').find((l) => l.trim().startsWith('RUN: {'));
  expect(line, run.stdout).toBeDefined();
  return JSON.parse(line!.trim().slice('RUN: '.length)) as Record<string, unknown>;
}

describe('the mpprov.mpprov collection, the shipped examples against 20 simulated MPs in four sites', () => {
  it('reads the fleet from mpprov\'s inventory file: one host per MP, a group per site', async () => {
    const graph = await runTool('ansible-inventory', ['-i', join(lab, 'fleet.mpprov.yml'), '--graph'], {
      cwd: examplesDir,
      env: ansibleEnv(work),
    });
    expect(graph.code, graph.stderr).toBe(0);
    for (const site of SITES) expect(graph.stdout).toContain(`@site_${site}:`);
    for (const host of HOSTS) expect(graph.stdout).toContain(`|--${host}\n`);
  });

  it('check mode with --diff plans every MP and sends no changing request', async () => {
    clearRequests();
    const run = await playbook(['--check', '--diff', '-vvv']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const recap = recapOf(run);
    for (const host of HOSTS) expect(recap[host], host).toMatchObject({ changed: 1, failed: 0 });
    expect(run.stdout).toContain('+++ after: mp-7: eth1 inet (create, from the profile)');
    expect(run.stdout).toContain('+wpa_password: "(changed)"');
    expect(changingRequests()).toEqual([]);
    expect(restarts()).toEqual(HOSTS.map(() => 0));
  }, RUN_TIMEOUT);

  it('a first run configures every MP once and sums the fleet up in custom stats', async () => {
    clearRequests();
    const run = await playbook(['-vvv', '--diff']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const recap = recapOf(run);
    for (const host of HOSTS) expect(recap[host], host).toMatchObject({ changed: 1, failed: 0 });
    expect(customStats(run)).toMatchObject({ mpprov_changed: 20, mpprov_unchanged: 0, mpprov_failed: '0', mpprov_not_run: '0' });
    expect(fleet.devices.map((sim) => sim.requests().some((r) => r.method === 'POST'))).toEqual(HOSTS.map(() => true));
    expect(restarts()).toEqual(HOSTS.map(() => 1));
  }, RUN_TIMEOUT);

  it('a second run changes nothing and sends no changing request', async () => {
    clearRequests();
    const run = await playbook(['--diff']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const recap = recapOf(run);
    for (const host of HOSTS) expect(recap[host], host).toMatchObject({ changed: 0, failed: 0 });
    expect(customStats(run)).toMatchObject({ mpprov_changed: 0, mpprov_unchanged: 20 });
    expect(changingRequests()).toEqual([]);
  }, RUN_TIMEOUT);

  it('a run from a fresh controller state folder (an AWX job) changes nothing and sends no POST', async () => {
    clearRequests();
    const run = await playbook([], { stateDir: tempFolder('fresh-state'), home: join(work, 'controller-2') });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const recap = recapOf(run);
    for (const host of HOSTS) expect(recap[host], host).toMatchObject({ changed: 0, failed: 0 });
    expect(fleet.devices.map((sim) => sim.requests().length > 0)).toEqual(HOSTS.map(() => true));
    expect(changingRequests()).toEqual([]);
    expect(restarts()).toEqual(HOSTS.map(() => 1));
  }, RUN_TIMEOUT);

  it('a wrong admin password fails that MP only; every other site still runs and the summary names it', async () => {
    const credentials = parse(readFileSync(join(lab, 'credentials.yml'), 'utf8')) as {
      mpprov_admin_passwords: Record<string, string>;
    };
    expect(credentials.mpprov_admin_passwords['mp-5']).toBe(device(5).password);
    credentials.mpprov_admin_passwords['mp-5'] = WRONG_PASSWORD;
    const wrong = join(work, 'wrong-credentials.yml');
    writeFileSync(wrong, stringify(credentials), { mode: 0o600 });
    const run = await playbook([], { credentials: wrong });
    expect(run.code).toBe(2);
    const recap = recapOf(run);
    expect(recap['mp-5']).toMatchObject({ failed: 1, changed: 0 });
    for (const host of HOSTS.filter((h) => h !== 'mp-5')) expect(recap[host], host).toMatchObject({ failed: 0, ok: 1 });
    expect(run.stdout).toMatch(/fatal: \[mp-5\]: FAILED! => .*"msg": "mp-5: FAILED: bad credentials for admin at https:\/\/127\.0\.0\.1:\d+"/);
    expect(run.stdout).toContain('"msg": "failed: mp-5; never run: none"');
    expect(customStats(run)).toMatchObject({ mpprov_failed: '1', mpprov_not_run: '0', mpprov_unchanged: 19 });
  }, RUN_TIMEOUT);

  it('two controllers at once on one fleet: every MP is configured once, none left with a pending change', async () => {
    const before = restarts();
    clearRequests();
    // A change for every MP (a /25 instead of a /24), started by two controllers sharing the state folder.
    const [a, b] = await Promise.all([
      playbook(['-e', 'mpprov_prefix_length=25'], { home: join(work, 'controller-a') }),
      playbook(['-e', 'mpprov_prefix_length=25'], { home: join(work, 'controller-b') }),
    ]);
    expect(a.code, a.stdout + a.stderr).toBe(0);
    expect(b.code, b.stdout + b.stderr).toBe(0);
    const [recapA, recapB] = [recapOf(a), recapOf(b)];
    for (const host of HOSTS) {
      expect(recapA[host]!.failed + recapB[host]!.failed, host).toBe(0);
      expect(recapA[host]!.changed + recapB[host]!.changed, host).toBe(1);
    }
    expect(restarts()).toEqual(before.map((n) => n + 1));
    for (const [i, sim] of fleet.devices.entries()) {
      const { active, pending } = sim.state().interfaces;
      expect(configOf(pending), `mp-${i}`).toEqual(configOf(active));
    }
  }, RUN_TIMEOUT);

  it('the batch path (mpprov.mpprov.fleet) runs one mpprov for all and gives each host its own result', async () => {
    clearRequests();
    const run = await playbook(['-e', 'mpprov_prefix_length=25', '--diff'], {
      playbook: 'provision-fleet-batch.yml',
      stateDir: tempFolder('batch-state'),
    });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const recap = recapOf(run);
    for (const host of HOSTS) expect(recap[host], host).toMatchObject({ changed: 0, failed: 0 });
    expect(run.stdout).toContain('"msg": "no-change: already matches the configuration: nothing to do, no restart"');
    expect(changingRequests()).toEqual([]);
    // Back to /24 through the batch path: every MP changes in the one run.
    const back = await playbook(['--diff'], { playbook: 'provision-fleet-batch.yml' });
    expect(back.code, back.stdout + back.stderr).toBe(0);
    const recapBack = recapOf(back);
    for (const host of HOSTS) expect(recapBack[host], host).toMatchObject({ changed: 1, failed: 0 });
    expect(customStats(back)).toMatchObject({ mpprov_changed: 20, mpprov_unchanged: 0 });
  }, RUN_TIMEOUT);

  it('the json callback shows no secret either', async () => {
    const run = await playbook(['--check', '--diff'], { env: { ANSIBLE_STDOUT_CALLBACK: 'json' } });
    expect(run.code, run.stderr).toBe(0);
    const parsed = JSON.parse(run.stdout) as { stats: Record<string, { failures: number }> };
    expect(Object.keys(parsed.stats).sort()).toEqual([...HOSTS, 'localhost'].sort());
  }, RUN_TIMEOUT);

  it('documents the modules and the inventory plugin, and builds into a collection that installs', async () => {
    const env = ansibleEnv(work);
    for (const [type, name] of [
      ['module', 'mpprov.mpprov.monitoring_point'],
      ['module', 'mpprov.mpprov.fleet'],
      ['inventory', 'mpprov.mpprov.inventory'],
    ] as const) {
      const doc = await runTool('ansible-doc', ['-t', type, name], { cwd: work, env });
      expect(doc.code, doc.stderr).toBe(0);
      expect(doc.stdout).toContain(name.toUpperCase());
    }
    const built = await runTool('ansible-galaxy', ['collection', 'build', collectionDir, '--output-path', join(work, 'galaxy')], {
      cwd: work,
      env,
    });
    expect(built.code, built.stdout + built.stderr).toBe(0);
    const tarball = join(work, `galaxy/mpprov-mpprov-${packageVersion}.tar.gz`);
    const installed = await runTool('ansible-galaxy', ['collection', 'install', tarball, '-p', join(work, 'installed')], {
      cwd: work,
      env,
    });
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    const listed = await runTool('tar', ['-tzf', tarball], { cwd: work, env });
    expect(listed.stdout.split('\n').filter((f) => /\.pyc$|__pycache__/.test(f))).toEqual([]);
  }, RUN_TIMEOUT);

  it('the deprecated apply module still applies a profile, and says it is deprecated', async () => {
    const profiles = join(work, 'profiles');
    mkdirSync(join(profiles, 'secrets'), { recursive: true });
    writeFileSync(join(profiles, 'mp-0.yaml'), stickYaml([{ name: 'mp-0', sim: device(0) }]));
    writeFileSync(join(profiles, 'secrets/mp-0.pw'), `${device(0).password}\n`, { mode: 0o600 });
    const args = `profile=${join(profiles, 'mp-0.yaml')} mpprov=${join(work, 'mpprov')} state_dir=${join(work, 'state')}`;
    const run = await runTool('ansible', ['localhost', '-m', 'mpprov.mpprov.apply', '-a', args, '--check'], {
      cwd: work,
      env: ansibleEnv(work),
    });
    printed.push(run.stdout, run.stderr);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('"outcome": "changed"');
    expect(run.stderr).toContain('mpprov.mpprov.apply has been deprecated');
  }, RUN_TIMEOUT);

  it('never shows a secret: -vvv, --diff, the json callback, failures', () => {
    const output = printed.join('\n');
    expect(printed.length).toBeGreaterThanOrEqual(20);
    expect(output).toContain('VALUE_SPECIFIED_IN_NO_LOG_PARAMETER');
    const secrets = [dot1xPassword, WRONG_PASSWORD, ...fleet.devices.map((sim) => sim.password)];
    expect(secrets.every((s) => s.length >= 12)).toBe(true);
    for (const secret of secrets) expect(output.includes(secret), 'a secret in Ansible\'s output').toBe(false);
  });
});
