import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet, type SimulatorHandle } from '../../src/simulator/index.js';
import { cliPath } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';
import { ansibleEnv, examplesDir, requireTool, runTool, type ToolRun } from './ansible-run.js';

/**
 * The collection used as a careless operator and a hostile one would: secrets that break naive
 * masking, arguments Ansible itself refuses, a module SIGKILLed in the middle of a run. Real
 * ansible-playbook runs against a simulated MP on loopback, with the real mpprov.
 */

const RUN_TIMEOUT = 180_000;
// Awkward on purpose: quotes, a shell variable, template-looking text, a newline, non-ASCII.
const DOT1X_SECRET = `Dq'"$HOME {{ lookup('env','HOME') }}\nÜñî-77`;
const PSK_SECRET = 'Wifi-Psk-Not-A-Key-4711';
const FLEET_SECRET = 'Fleet-Dot1x-Secret-0815';
const KILLED_SECRET = 'Killed-Run-Dot1x-9191';
const URL_SECRET = 'Written-Into-The-Url-31';

let fleet: Fleet;
let work: string;
let sim: SimulatorHandle;
const printed: string[] = [];

beforeAll(async () => {
  for (const tool of ['ansible-playbook', 'flock'])
    requireTool(tool, 'the hostile Ansible tests drive real playbook runs');
  fleet = await startFleet(1, { restartMs: 100, serviceRateLimit: false });
  sim = fleet.devices[0]!;
  work = tempFolder('ansible-hostile');
  writeFileSync(join(work, 'mpprov'), `#!/bin/sh\nexec '${process.execPath}' '${cliPath}' "$@"\n`);
  chmodSync(join(work, 'mpprov'), 0o755);
  // Stands in for mpprov long enough to be killed: says its own pid and its parent's (the module's).
  writeFileSync(join(work, 'slow-mpprov'), `#!/bin/sh\necho "$$ $PPID" > '${join(work, 'pids')}'\nexec sleep 120\n`);
  chmodSync(join(work, 'slow-mpprov'), 0o755);
  // Values Ansible must not template: !unsafe, as a Vault file or AWX credential would hold them.
  writeFileSync(
    join(work, 'secrets.yml'),
    [
      `admin_password: !unsafe ${JSON.stringify(sim.password)}`,
      `dot1x_password: !unsafe ${JSON.stringify(DOT1X_SECRET)}`,
      `psk: !unsafe ${JSON.stringify(PSK_SECRET)}`,
      `fleet_password: !unsafe ${JSON.stringify(FLEET_SECRET)}`,
      `killed_password: !unsafe ${JSON.stringify(KILLED_SECRET)}`,
      `url_password: !unsafe ${JSON.stringify(URL_SECRET)}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
}, RUN_TIMEOUT);

afterAll(async () => {
  await fleet?.close();
});

function env(): NodeJS.ProcessEnv {
  // Ansible's remote temp (the module and its arguments, on a local connection) in the test's folder.
  return { ...ansibleEnv(work), ANSIBLE_REMOTE_TMP: join(work, 'remote-tmp') };
}

function writePlaybook(name: string, tasks: string): string {
  const file = join(work, name);
  writeFileSync(file, `- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n${tasks}`);
  return file;
}

function pointTask(module: string, password: string, extra = ''): string {
  return [
    `    - ${module}:`,
    '        name: mp-0',
    `        url: ${sim.url}`,
    '        password: "{{ admin_password }}"',
    `        tls: {fingerprint_sha256: "${sim.fingerprintSha256}"}`,
    '        interfaces:',
    '          eth1:',
    '            ipv4: {method: static, address: 198.51.100.7/24}',
    '            dot1x:',
    '              eap: peap',
    '              inner: mschapv2',
    '              identity: mp-0',
    `              password: "{{ ${password} }}"`,
    `              ca_cert: ${join(examplesDir, 'certs/radius-ca.pem')}`,
    extra,
  ]
    .filter((line) => line !== '')
    .join('\n');
}

async function playbook(file: string, args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<ToolRun> {
  const run = await runTool('ansible-playbook', [file, '-e', `@${join(work, 'secrets.yml')}`, ...args], {
    cwd: work,
    env: { ...env(), ...extraEnv },
  });
  printed.push(run.stdout, run.stderr);
  return run;
}

/** Every file under a folder whose bytes hold the text. */
function filesHolding(folder: string, text: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => readFileSync(file).includes(text));
}

describe('the Ansible collection under hostile and careless use', () => {
  it('masks the interfaces\' secrets when Ansible refuses the arguments (-vvv and the json callback)', async () => {
    const file = writePlaybook(
      'refused.yml',
      [
        // password and password_file both: refused by the argument validation, before the module's code runs.
        pointTask(
          'mpprov.mpprov.monitoring_point',
          'dot1x_password',
          '          wlan0: {wireless: {ssid: lab, psk: "{{ psk }}"}}\n        password_file: /etc/hostname',
        ),
        '      ignore_errors: true',
        '    - mpprov.mpprov.fleet:',
        '        monitoring_points:',
        `          - {name: a, url: "${sim.url}", interfaces: {eth1: {dot1x: {password: "{{ fleet_password }}"}}}}`,
        `          - {name: a, url: "${sim.url}"}`,
        '      ignore_errors: true',
        // A careless operator's password in the URL: mpprov refuses it, Ansible's invocation shows the URL.
        '    - mpprov.mpprov.monitoring_point:',
        '        name: mp-0',
        `        url: "${sim.url.replace('https://', 'https://admin:{{ url_password }}@')}"`,
        `        tls: {fingerprint_sha256: "${sim.fingerprintSha256}"}`,
        `        mpprov_path: ${join(work, 'mpprov')}`,
        `        state_dir: ${join(work, 'state-refused')}`,
        '      ignore_errors: true',
        '',
      ].join('\n'),
    );
    const verbose = await playbook(file, ['-vvv']);
    expect(verbose.stdout).toContain('parameters are mutually exclusive: password|password_file');
    expect(verbose.stdout).toContain('monitoring_points: a is named more than once');
    expect(verbose.stdout).toContain('"module_args"');
    expect(verbose.stdout).toContain('the URL must not hold credentials');
    const json = await playbook(file, [], { ANSIBLE_STDOUT_CALLBACK: 'json' });
    const parsed = JSON.parse(json.stdout) as { stats: Record<string, { failures: number; ignored: number }> };
    expect(parsed.stats.localhost).toMatchObject({ failures: 0, ignored: 3 });
    for (const run of [verbose, json]) {
      for (const secret of [DOT1X_SECRET, PSK_SECRET, FLEET_SECRET, URL_SECRET, sim.password, 'Üñî-77'])
        expect(run.stdout.includes(secret) || run.stderr.includes(secret), secret).toBe(false);
    }
  }, RUN_TIMEOUT);

  it('a wrong mpprov_path fails in one sentence, before any temporary stick exists', async () => {
    const state = join(work, 'state-wrong-path');
    const file = writePlaybook(
      'wrong-path.yml',
      `${pointTask('mpprov.mpprov.monitoring_point', 'dot1x_password', `        mpprov_path: ${join(work, 'nope/mpprov')}\n        state_dir: ${state}`)}\n`,
    );
    const run = await playbook(file, []);
    expect(run.code).toBe(2);
    expect(run.stdout).toContain(`"msg": "mpprov_path: ${join(work, 'nope/mpprov')} is not an executable file on the controller"`);
    expect(run.stdout).not.toContain('Traceback');
    expect(existsSync(join(state, 'ansible-sticks'))).toBe(false);
  }, RUN_TIMEOUT);

  it('an mpprov_path that prints garbage or a flood fails in one sentence, no traceback, its stick removed', async () => {
    const state = join(work, 'state-garbage');
    const cases = [
      ['garbage', 'printf \'{"type":"version","format":1}\\n{"type":"result","devices":[{"steps":"x"}]}\\n\'', 'line 2 of mpprov\'s output (type result) is not in the form this module reads'],
      ['flood', "head -c 80000000 /dev/zero | tr '\\0' x", 'mpprov printed more than 64 MiB on stdout: not the output of an mpprov this module reads'],
    ] as const;
    for (const [name, body, sentence] of cases) {
      writeFileSync(join(work, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(work, name), 0o755);
      const file = writePlaybook(
        `${name}.yml`,
        `${pointTask('mpprov.mpprov.monitoring_point', 'dot1x_password', `        mpprov_path: ${join(work, name)}\n        state_dir: ${state}`)}\n`,
      );
      const run = await playbook(file, []);
      expect(run.code, name).toBe(2);
      expect(run.stdout, name).toContain(`"msg": "${sentence.replace(/"/g, '\\"')}"`);
      expect(run.stdout + run.stderr, name).not.toMatch(/Traceback|MODULE FAILURE/);
      expect(readdirSync(join(state, 'ansible-sticks')), name).toEqual([]);
    }
  }, RUN_TIMEOUT);

  it('a SIGKILLed module leaves its stick only in the state folder, and the next run removes it and says so', async () => {
    const state = join(work, 'state-killed');
    const sticks = join(state, 'ansible-sticks');
    const slow = writePlaybook(
      'slow.yml',
      `${pointTask('mpprov.mpprov.monitoring_point', 'killed_password', `        mpprov_path: ${join(work, 'slow-mpprov')}\n        state_dir: ${state}`)}\n`,
    );
    const child = spawn('ansible-playbook', [slow, '-e', `@${join(work, 'secrets.yml')}`], {
      cwd: work,
      env: env(),
      stdio: 'ignore',
    });
    const ended = new Promise<void>((resolve) => child.on('close', () => resolve()));
    const pidsFile = join(work, 'pids');
    for (let i = 0; i < 600 && !existsSync(pidsFile); i += 1) await new Promise((r) => setTimeout(r, 100));
    const [mpprovPid, modulePid] = readFileSync(pidsFile, 'utf8').trim().split(' ').map(Number);
    expect(mpprovPid).toBeGreaterThan(1);
    expect(modulePid).toBeGreaterThan(1);
    // The stick, secret and all, is in the state folder while the run lives.
    expect(filesHolding(sticks, KILLED_SECRET)).toHaveLength(1);
    process.kill(modulePid!, 'SIGKILL');
    process.kill(mpprovPid!, 'SIGKILL');
    child.kill('SIGKILL');
    await ended;
    expect(filesHolding(sticks, KILLED_SECRET), 'the killed run left its stick').toHaveLength(1);
    expect(filesHolding(join(work, 'remote-tmp'), KILLED_SECRET), 'Ansible left the module arguments').toEqual([]);

    const next = writePlaybook(
      'next.yml',
      `${pointTask('mpprov.mpprov.monitoring_point', 'dot1x_password', `        mpprov_path: ${join(work, 'mpprov')}\n        state_dir: ${state}\n        restart_timeout: 30`)}\n`,
    );
    // At -vvv with --diff: the awkward 802.1X password goes to the device and nowhere else.
    const run = await playbook(next, ['-vvv', '--diff']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('+++ after: mp-0: eth1 inet (create, from the profile)');
    // Ansible wraps a warning at the terminal's width, at spaces and hyphens.
    expect((run.stderr + run.stdout).replace(/\s+/g, '')).toContain(
      `removed 1 temporary stick folder(s) in ${sticks} left by runs that were killed (they held secrets)`.replace(/\s+/g, ''),
    );
    expect(filesHolding(state, KILLED_SECRET)).toEqual([]);
    expect(readdirSync(sticks)).toEqual([]);
  }, RUN_TIMEOUT);

  it('the inventory plugin reads no file outside its configuration\'s folder', async () => {
    const folder = join(work, 'inventory');
    mkdirSync(folder);
    const outside = join(work, 'outside.yaml');
    writeFileSync(outside, 'version: 1\nsites:\n  s1:\n    monitoring_points:\n      - {name: mp-x, url: "https://192.0.2.1"}\n');
    symlinkSync(outside, join(folder, 'link.yaml'));
    for (const source of ['../outside.yaml', 'link.yaml', outside]) {
      const config = join(folder, 'fleet.mpprov.yml');
      writeFileSync(config, `plugin: mpprov.mpprov.inventory\nsource: ${source}\n`);
      const run = await runTool('ansible-inventory', ['-i', config, '--list'], {
        cwd: work,
        env: { ...env(), ANSIBLE_INVENTORY_ENABLED: 'mpprov.mpprov.inventory', ANSIBLE_INVENTORY_UNPARSED_FAILED: '1' },
      });
      expect(run.code, source).not.toBe(0);
      expect(run.stdout, source).not.toContain('mp-x');
      expect(run.stderr.replace(/\s+/g, ''), source).toContain(
        `${config}: source: ${source} is outside ${folder}, the folder of this configuration`.replace(/\s+/g, ''),
      );
    }
  }, RUN_TIMEOUT);

  it("hands the inventory's cells and values to Ansible as text, never as templates it would evaluate", async () => {
    const folder = join(work, 'templated-inventory');
    mkdirSync(folder);
    const marker = join(folder, 'evaluated');
    const pipe = `{{ lookup('pipe', 'touch ${marker}') }}`;
    writeFileSync(
      join(folder, 'fleet.csv'),
      `site,name,url,note,sum\ns1,mp-csv,https://192.0.2.1,"${pipe.replaceAll('"', '""')}",{{ 6 * 7 }}\n`,
    );
    writeFileSync(
      join(folder, 'fleet.yaml'),
      `version: 1\ndefaults: {sum: "{{ 6 * 7 }}"}\nsites:\n  s2:\n    vars: {note: ${JSON.stringify(pipe)}}\n    monitoring_points:\n      - {name: mp-yaml, url: "https://192.0.2.2", own: "{{ 6 * 7 }}"}\n`,
    );
    for (const [source, host, vars] of [
      ['fleet.csv', 'mp-csv', ['mpprov_note', 'mpprov_sum']],
      ['fleet.yaml', 'mp-yaml', ['mpprov_note', 'mpprov_sum', 'mpprov_own']],
    ] as const) {
      const config = join(folder, `${source}.mpprov.yml`);
      writeFileSync(config, `plugin: mpprov.mpprov.inventory\nsource: ${source}\n`);
      const run = await runTool('ansible', ['-i', config, host, '-m', 'debug', '-a', `msg={{ [${vars.join(', ')}] }}`], {
        cwd: work,
        env: { ...env(), ANSIBLE_INVENTORY_ENABLED: 'mpprov.mpprov.inventory', ANSIBLE_INVENTORY_UNPARSED_FAILED: '1' },
      });
      expect(run.code, `${source}: ${run.stderr}`).toBe(0);
      const said = run.stdout.slice(run.stdout.indexOf('{'));
      expect(JSON.parse(said), source).toEqual({
        msg: source === 'fleet.csv' ? [pipe, '{{ 6 * 7 }}'] : [pipe, '{{ 6 * 7 }}', '{{ 6 * 7 }}'],
      });
    }
    expect(existsSync(marker)).toBe(false);
  }, RUN_TIMEOUT);

  it("never lets a cell set one of Ansible's own variables, even with var_prefix ''", async () => {
    const folder = join(work, 'unprefixed-inventory');
    mkdirSync(folder);
    const marker = join(folder, 'ran');
    // A cell naming the controller's Python: with a local connection Ansible would run it there.
    writeFileSync(join(folder, 'evil.sh'), `#!/bin/sh\ntouch '${marker}'\nexec python3 "$@"\n`);
    chmodSync(join(folder, 'evil.sh'), 0o755);
    writeFileSync(
      join(folder, 'fleet.csv'),
      `site,name,url,ansible_python_interpreter\ns1,mp-unprefixed,https://192.0.2.1,${join(folder, 'evil.sh')}\n`,
    );
    const config = join(folder, 'fleet.mpprov.yml');
    writeFileSync(config, "plugin: mpprov.mpprov.inventory\nsource: fleet.csv\nvar_prefix: ''\n");
    const run = await runTool('ansible', ['-i', config, 'mp-unprefixed', '-m', 'ping'], {
      cwd: work,
      env: { ...env(), ANSIBLE_INVENTORY_ENABLED: 'mpprov.mpprov.inventory', ANSIBLE_INVENTORY_UNPARSED_FAILED: '1' },
    });
    expect(existsSync(marker)).toBe(false);
    expect(run.code).not.toBe(0);
    expect(run.stderr.replace(/\s+/g, ' ')).toContain(
      "ansible_python_interpreter would be one of Ansible's own variables",
    );
  }, RUN_TIMEOUT);

  it('reads an inventory named .CSV (a Windows export) as CSV, as mpprov stick build does', async () => {
    const folder = join(work, 'capital-csv');
    mkdirSync(folder);
    writeFileSync(join(folder, 'FLEET.CSV'), 'site,name,url\r\ns1,mp-upper,https://192.0.2.1\r\n');
    const config = join(folder, 'fleet.mpprov.yml');
    writeFileSync(config, 'plugin: mpprov.mpprov.inventory\nsource: FLEET.CSV\n');
    const run = await runTool('ansible-inventory', ['-i', config, '--graph'], {
      cwd: work,
      env: { ...env(), ANSIBLE_INVENTORY_ENABLED: 'mpprov.mpprov.inventory', ANSIBLE_INVENTORY_UNPARSED_FAILED: '1' },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/@site_s1:\n[ |]+--mp-upper\n/);
  }, RUN_TIMEOUT);

  it('never shows a secret in any of these runs', () => {
    expect(printed.length).toBeGreaterThanOrEqual(12);
    const output = printed.join('\n');
    for (const secret of [DOT1X_SECRET, PSK_SECRET, FLEET_SECRET, KILLED_SECRET, URL_SECRET, sim.password])
      expect(output.includes(secret), secret).toBe(false);
  });
});
