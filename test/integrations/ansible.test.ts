import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet, type SimulatorHandle } from '../../src/simulator/index.js';
import { cliPath, repoRoot } from '../support/run-cli.js';
import { PEAP_PASSWORD, stickYaml } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';
import { ansibleEnv, collectionDir, examplesDir, moduleFile, playRecap, requireTool, runTool, systemPython, type RecapCounts, type ToolRun } from './ansible-run.js';

/**
 * The Ansible collection (integrations/ansible) driven by Debian's ansible-playbook, as a team's
 * controller runs it: the example fleet playbook (a play per site, throttled), an inventory with
 * one host per Monitoring Point, one profile per MP, and a fleet of simulated MPs over real HTTPS.
 * The module runs the real mpprov (a wrapper around this checkout's build) as a child process.
 */

const MPS = [
  { name: 'mp-berlin-01', site: 'site_berlin', dot1x: true },
  { name: 'mp-berlin-02', site: 'site_berlin', dot1x: false },
  { name: 'mp-hamburg-01', site: 'site_hamburg', dot1x: true },
] as const;
const HOSTS = MPS.map((mp) => mp.name);
const RUN_TIMEOUT = 180_000;
const packageVersion = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;

let fleet: Fleet;
let work: string;
/** Every byte ansible-playbook printed in this file, searched for secrets at the end. */
const printed: string[] = [];

beforeAll(async () => {
  requireTool('ansible-playbook', 'the Ansible collection test runs the example playbook with it');
  requireTool('ansible-doc', 'the Ansible collection test reads the module documentation with it');
  requireTool('ansible-galaxy', 'the Ansible collection test builds and installs the collection with it');
  requireTool('ansible', 'the Ansible collection test runs the module ad hoc with it');
  fleet = await startFleet(MPS.length, { restartMs: 100, serviceRateLimit: false });
  work = tempFolder('ansible');
  writeFileSync(join(work, 'ansible.cfg'), '[defaults]\n');
  // One profile per MP, named after its inventory host, its admin password in a file beside it.
  mkdirSync(join(work, 'profiles/secrets'), { recursive: true });
  MPS.forEach((mp, i) => {
    const sim = device(i);
    writeFileSync(join(work, 'profiles', `${mp.name}.yaml`), stickYaml([{ name: mp.name, sim, dot1x: mp.dot1x }]));
    writeFileSync(join(work, 'profiles/secrets', `${mp.name}.pw`), `${sim.password}\n`, { mode: 0o600 });
  });
  // The controller's mpprov: the command package.json's bin names (tsc's build with MPPROV_TEST_CLI=dist).
  writeFileSync(join(work, 'mpprov'), `#!/bin/sh\nexec '${process.execPath}' '${cliPath}' "$@"\n`);
  chmodSync(join(work, 'mpprov'), 0o755);
  // The controller keeps mpprov's state (the secrets record) from run to run.
  writeFileSync(join(work, 'agent.yaml'), `version: 1\nstate_dir: ${join(work, 'state')}\ntimeouts: { restart_s: 30 }\n`);
  writeFileSync(join(work, 'inventory.yml'), inventory(join(work, 'mpprov')));
});

afterAll(async () => {
  await fleet?.close();
});

function device(index: number): SimulatorHandle {
  const sim = fleet.devices[index];
  if (sim === undefined) throw new Error(`the fleet has no device ${index}`);
  return sim;
}

function inventory(executable: string): string {
  const sites = [...new Set(MPS.map((mp) => mp.site))];
  return [
    'all:',
    '  vars:',
    `    ansible_python_interpreter: ${systemPython}`,
    `    mpprov_profile_dir: ${join(work, 'profiles')}`,
    `    mpprov_agent_config: ${join(work, 'agent.yaml')}`,
    `    mpprov_executable: ${executable}`,
    '    mpprov_site_throttle: 2',
    '  children:',
    '    monitoring_points:',
    '      children:',
    ...sites.flatMap((site) => [`        ${site}:`, '          hosts:', ...MPS.filter((mp) => mp.site === site).map((mp) => `            ${mp.name}:`)]),
    '',
  ].join('\n');
}

async function playbook(...args: string[]): Promise<ToolRun> {
  const run = await runTool('ansible-playbook', ['-i', join(work, 'inventory.yml'), join(examplesDir, 'provision-fleet.yml'), ...args], { cwd: work, env: ansibleEnv(work) });
  printed.push(run.stdout, run.stderr);
  return run;
}

function clearRequests(): void {
  for (const sim of fleet.devices) sim.clearRequests();
}

/** Per device, the methods it was asked since the last clearRequests(). */
function methodsPerDevice(): string[][] {
  return fleet.devices.map((sim) => sim.requests().map((r) => r.method));
}

/** Per device, its networking restarts so far. */
function restarts(): number[] {
  return fleet.devices.map((sim) => sim.state().restarts);
}

function recapOf(run: ToolRun): Record<string, RecapCounts> {
  const recap = playRecap(run.stdout);
  expect(Object.keys(recap).sort(), `PLAY RECAP of:\n${run.stdout}\n${run.stderr}`).toEqual([...HOSTS].sort());
  return recap;
}

describe('the mpprov.mpprov collection with ansible-playbook', () => {
  it('documents the module so that ansible-doc reads it, with the options the module takes', async () => {
    const doc = await runTool('ansible-doc', ['-t', 'module', 'mpprov.mpprov.apply'], { cwd: work, env: ansibleEnv(work) });
    expect(doc.stderr).toBe('');
    expect(doc.code).toBe(0);
    expect(doc.stdout).toContain('MPPROV.MPPROV.APPLY');
    expect(doc.stdout).toContain('delegate_to: localhost');

    // DOCUMENTATION's options and the argument spec the module runs with, side by side.
    const script = [
      'import importlib.util, json, sys, yaml',
      'spec = importlib.util.spec_from_file_location("apply", sys.argv[1])',
      'm = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)',
      'doc = yaml.safe_load(m.DOCUMENTATION); yaml.safe_load(m.EXAMPLES); yaml.safe_load(m.RETURN)',
      'print(json.dumps({"doc": doc["options"], "spec": m.ARGUMENT_SPEC}))',
    ].join('\n');
    const loaded = await runTool(systemPython, ['-c', script, moduleFile], { cwd: work, env: ansibleEnv(work) });
    expect(loaded.stderr).toBe('');
    const { doc: options, spec } = JSON.parse(loaded.stdout) as { doc: Record<string, Record<string, unknown>>; spec: Record<string, Record<string, unknown>> };
    expect(Object.keys(options).sort()).toEqual(Object.keys(spec).sort());
    const pick = (o: Record<string, unknown>) => ({ type: o.type, default: o.default ?? null, required: o.required ?? false, elements: o.elements ?? null, no_log: o.no_log ?? false });
    for (const name of Object.keys(spec)) expect(pick(options[name]!), name).toEqual({ ...pick(spec[name]!), no_log: false });
    // mpprov takes no secret on its command line (the profile names its secrets), so neither does the
    // module: an option that looks like one would have to be no_log. secrets_record is a path to hashes.
    expect(Object.keys(spec).filter((name) => /pass|secret|token|key/.test(name) && name !== 'secrets_record')).toEqual([]);
  });

  it('builds with ansible-galaxy into a collection that installs and documents itself', async () => {
    const env = ansibleEnv(work);
    const built = await runTool('ansible-galaxy', ['collection', 'build', collectionDir, '--output-path', join(work, 'galaxy')], { cwd: work, env });
    expect(built.code, built.stdout + built.stderr).toBe(0);
    // galaxy.yml's version follows package.json's: the module reads that release's JSON output.
    const tarball = join(work, `galaxy/mpprov-mpprov-${packageVersion}.tar.gz`);
    const installed = await runTool('ansible-galaxy', ['collection', 'install', tarball, '-p', join(work, 'installed')], { cwd: work, env });
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    const doc = await runTool('ansible-doc', ['-t', 'module', 'mpprov.mpprov.apply'], { cwd: work, env: { ...env, ANSIBLE_COLLECTIONS_PATH: join(work, 'installed') } });
    expect(doc.code, doc.stderr).toBe(0);
    expect(doc.stdout).toContain(join(work, 'installed/ansible_collections/mpprov/mpprov/plugins/modules/apply.py'));
  });

  it('check mode with --diff plans every MP, site by site, and sends nothing but GET requests', async () => {
    clearRequests();
    const run = await playbook('--check', '--diff', '-vvv');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const recap = recapOf(run);
    for (const host of HOSTS) expect(recap[host], host).toMatchObject({ changed: 1, failed: 0 });
    expect(run.stdout).toContain('PLAY [Provision the Monitoring Points of site_berlin]');
    expect(run.stdout).toContain('PLAY [Provision the Monitoring Points of site_hamburg]');
    // The diff names the stanza each MP would get (from the structured diff, or the plan's steps).
    for (const host of HOSTS) expect(run.stdout).toMatch(new RegExp(`${host}.*eth1 inet`));

    const methods = methodsPerDevice();
    expect(methods.map((m) => m.length > 0)).toEqual(HOSTS.map(() => true));
    expect(methods.flat().filter((m) => m !== 'GET')).toEqual([]);
    expect(restarts()).toEqual(HOSTS.map(() => 0));
  }, RUN_TIMEOUT);

  it('a first run configures every MP and reports changed', async () => {
    clearRequests();
    const run = await playbook('-vvv');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const recap = recapOf(run);
    for (const host of HOSTS) expect(recap[host], host).toMatchObject({ ok: 1, changed: 1, failed: 0 });
    // Each device got its configuration posted and its networking restarted.
    const methods = methodsPerDevice();
    expect(methods.map((m) => m.includes('POST'))).toEqual(HOSTS.map(() => true));
    expect(restarts()).toEqual(HOSTS.map(() => 1));
  }, RUN_TIMEOUT);

  it('a second run changes nothing (changed=0) and sends nothing that changes a device', async () => {
    clearRequests();
    const run = await playbook('-vvv', '--diff');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const recap = recapOf(run);
    for (const host of HOSTS) expect(recap[host], host).toMatchObject({ ok: 1, changed: 0, failed: 0 });
    const methods = methodsPerDevice();
    expect(methods.map((m) => m.length > 0)).toEqual(HOSTS.map(() => true));
    expect(methods.flat().filter((m) => m !== 'GET')).toEqual([]);
    expect(restarts()).toEqual(HOSTS.map(() => 1));
  }, RUN_TIMEOUT);

  it('check mode after the run plans no change', async () => {
    clearRequests();
    const run = await playbook('--check', '--diff');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const recap = recapOf(run);
    for (const host of HOSTS) expect(recap[host], host).toMatchObject({ changed: 0, failed: 0 });
    expect(methodsPerDevice().flat().filter((m) => m !== 'GET')).toEqual([]);
  }, RUN_TIMEOUT);

  it('runs site after site, at most mpprov_site_throttle MPs of a site at once', async () => {
    // A wrapper that logs when each mpprov starts and ends (nanoseconds), per profile.
    const log = join(work, 'mpprov-times.log');
    const logged = join(work, 'mpprov-logged');
    writeFileSync(logged, `#!/bin/sh\necho "start $(date +%s%N) $(basename "$(eval echo \\$$#)")" >> '${log}'\n'${join(work, 'mpprov')}' "$@"\nstatus=$?\necho "end $(date +%s%N) $(basename "$(eval echo \\$$#)")" >> '${log}'\nexit $status\n`);
    chmodSync(logged, 0o755);
    const run = await playbook('--check', '-e', `mpprov_executable=${logged}`, '-e', 'mpprov_site_throttle=1');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const span: Record<string, { start: number; end: number }> = {};
    for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
      const [edge, ns, profile] = line.split(' ');
      const host = profile!.replace(/\.yaml$/, '');
      span[host] = { ...span[host]!, [edge!]: Number(BigInt(ns!) / 1000n) };
    }
    expect(Object.keys(span).sort()).toEqual([...HOSTS].sort());
    const berlin = [span['mp-berlin-01']!, span['mp-berlin-02']!].sort((x, y) => x.start - y.start);
    // Throttle 1: the second MP of the site starts after the first one ended.
    expect(berlin[1]!.start).toBeGreaterThanOrEqual(berlin[0]!.end);
    // Site after site: Hamburg starts once Berlin is done.
    expect(span['mp-hamburg-01']!.start).toBeGreaterThanOrEqual(berlin[1]!.end);
  }, RUN_TIMEOUT);

  it('an invalid profile fails its host with mpprov\'s located problem, and the other hosts still run', async () => {
    const broken = join(work, 'broken');
    mkdirSync(join(broken, 'secrets'), { recursive: true });
    MPS.forEach((mp, i) => {
      const sim = device(i);
      const text = stickYaml([{ name: mp.name, sim, dot1x: mp.dot1x }]);
      // mp-berlin-02's address is not an address; the others stay valid (and configured).
      writeFileSync(join(broken, `${mp.name}.yaml`), mp.name === 'mp-berlin-02' ? text.replace('192.0.2.10/24', '192.0.2.300/24') : text);
      writeFileSync(join(broken, 'secrets', `${mp.name}.pw`), `${sim.password}\n`);
    });
    clearRequests();
    const run = await playbook('-e', `mpprov_profile_dir=${broken}`);
    expect(run.code).toBe(2);
    const recap = recapOf(run);
    expect(recap['mp-berlin-02']).toMatchObject({ failed: 1 });
    expect(recap['mp-berlin-01']).toMatchObject({ failed: 0, changed: 0 });
    expect(recap['mp-hamburg-01']).toMatchObject({ failed: 0, changed: 0 });
    expect(run.stdout).toMatch(/fatal: \[mp-berlin-02 -> localhost\]: FAILED! => .*"msg": ".*mp-berlin-02\.yaml:\d+:\d+: .*nothing was sent to any device/);
    expect(device(1).requests()).toEqual([]);
  }, RUN_TIMEOUT);

  it('a command line mpprov refuses fails the task with commander\'s one sentence', async () => {
    // Ad hoc, the module alone: concurrency 0 is refused by mpprov itself (exit status 64).
    const args = `profile=${join(work, 'profiles/mp-berlin-01.yaml')} mpprov=${join(work, 'mpprov')} agent_config=${join(work, 'agent.yaml')} concurrency=0`;
    const run = await runTool('ansible', ['localhost', '-i', join(work, 'inventory.yml'), '-m', 'mpprov.mpprov.apply', '-a', args], { cwd: work, env: ansibleEnv(work) });
    expect(run.code).toBe(2);
    expect(run.stdout).toContain(`"msg": "mpprov refused its command line (exit status 64): error: option '--concurrency <n>' argument '0' is invalid. '0' is not a positive number (an mpprov older`);
    expect(run.stdout).not.toContain('Usage: mpprov');
  }, RUN_TIMEOUT);

  it('refuses JSON output of another format instead of misreading it', async () => {
    const fake = join(work, 'mpprov-format-2');
    writeFileSync(fake, `#!/bin/sh\necho '{"type":"version","format":2,"mpprov":"9.0.0"}'\necho '{"type":"result","outcome":"no-change","devices":[]}'\n`);
    chmodSync(fake, 0o755);
    const run = await playbook('-e', `mpprov_executable=${fake}`);
    expect(run.code).toBe(2);
    // Every host of the first site fails, so Ansible ends the playbook there (the next site never starts).
    const berlin = MPS.filter((mp) => mp.site === 'site_berlin').map((mp) => mp.name);
    const recap = playRecap(run.stdout);
    expect(Object.keys(recap).sort()).toEqual(berlin);
    for (const host of berlin) expect(recap[host], host).toMatchObject({ failed: 1, changed: 0 });
    expect(run.stdout).toContain('mpprov 9.0.0 writes JSON output format 2; this module reads format 1');
  }, RUN_TIMEOUT);

  it('renders the structured diff of mpprov\'s plan per stanza, a changed secret as marks only', async () => {
    // The plan line as `mpprov plan --json` writes it with its structured diff (`diff`, `aclDiff`),
    // printed by a script so that every kind of change is in one line.
    const plan = {
      type: 'plan',
      device: 'mp-hamburg-01',
      steps: ['POST eth1 inet (update)', 'POST eth2 inet6 (create)', 'add ACL rule tcp 443', 'restart networking (2 stanza change(s))'],
      hasChanges: true,
      refusals: [],
      diff: [
        { stanza: 'eth1', family: 'inet', action: 'update', before: { method: 'dhcp', wpa_password: '(changed)' }, after: { method: 'static', address: '192.0.2.10', wpa_password: '(changed)' } },
        { stanza: 'eth2', family: 'inet6', action: 'create', before: null, after: { method: 'auto' } },
      ],
      aclDiff: [{ action: 'create', acl: { action: 'allow', protocol: 'tcp', from_port: 443, to_port: 443, source_addresses: ['10.0.0.0/8'], interfaces: ['eth0'] } }],
    };
    const result = { type: 'result', file: 'p.yaml', outcome: 'changed', devices: [{ device: 'mp-hamburg-01', url: 'https://192.0.2.10', outcome: 'changed', message: '4 step(s) would run', steps: [], warnings: [], durationMs: 1 }] };
    const script = join(work, 'mpprov-structured-diff');
    const lines = [{ type: 'version', format: 1, mpprov: packageVersion }, plan, result].map((line) => `echo '${JSON.stringify(line)}'`);
    writeFileSync(script, `#!/bin/sh\n${lines.join('\n')}\nexit 2\n`);
    chmodSync(script, 0o755);

    const run = await runTool('ansible-playbook', ['-i', join(work, 'inventory.yml'), join(examplesDir, 'provision-site.yml'), '-e', 'mpprov_site=site_hamburg', '-e', `mpprov_executable=${script}`, '--check', '--diff'], { cwd: work, env: ansibleEnv(work) });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const recap = playRecap(run.stdout);
    expect(Object.keys(recap)).toEqual(['mp-hamburg-01']);
    expect(recap).toMatchObject({ 'mp-hamburg-01': { changed: 1, failed: 0 } });
    const diff = run.stdout.slice(run.stdout.indexOf('--- before'), run.stdout.indexOf('changed: [mp-hamburg-01'));
    expect(diff.split('\n').filter((line) => /^(---|\+\+\+|[-+]\S)/.test(line))).toEqual([
      '--- before: mp-hamburg-01: eth1 inet (on the device)',
      '+++ after: mp-hamburg-01: eth1 inet (update, from the profile)',
      '-method: "dhcp"',
      '-wpa_password: "(previous secret)"',
      '+method: "static"',
      '+address: "192.0.2.10"',
      '+wpa_password: "(changed)"',
      '--- before: mp-hamburg-01: eth2 inet6 (on the device)',
      '+++ after: mp-hamburg-01: eth2 inet6 (create, from the profile)',
      '+method: "auto"',
      '--- before: mp-hamburg-01: acl (on the device)',
      '+++ after: mp-hamburg-01: acl (from the profile)',
      '+{"action": "allow", "from_port": 443, "interfaces": ["eth0"], "protocol": "tcp", "source_addresses": ["10.0.0.0/8"], "to_port": 443}',
    ]);
  }, RUN_TIMEOUT);

  it('never shows a secret of the profiles, even with -vvv', () => {
    const output = printed.join('\n');
    expect(printed.length).toBeGreaterThanOrEqual(12);
    expect(output).toContain('mpprov_version');
    const secrets = [PEAP_PASSWORD, ...fleet.devices.map((sim) => sim.password)];
    expect(secrets).toHaveLength(MPS.length + 1);
    for (const secret of secrets) expect(output.includes(secret), 'a secret in ansible-playbook\'s output').toBe(false);
  });
});
