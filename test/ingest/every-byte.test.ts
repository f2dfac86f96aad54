import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { allFiles, waitForJobEnds } from '../daemon/agent-process.js';
import { useAgentRig } from '../daemon/agent-rig.js';
import { type EchoingDevice, startEchoingDevice } from '../support/echoing-device.js';
import { runCli } from '../support/run-cli.js';
import { secretForms } from '../support/secret-forms.js';
import { PROFILE_ADMIN_PASSWORD, profilesDir, stateDir, type StickTarget } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * Hostile sticks through validate, plan and apply (text and --json) and
 * the daemon, each with a real stick (a folder for the CLI, a tmpfs mount for the daemon: FAT has
 * no links or FIFOs). Every byte mpprov wrote is collected (stdout, stderr, usb.log,
 * mpprov-result.json, MPPROV-*.TXT, every file under each state folder, the agent's output) and
 * searched for every secret in every form (test/support/secret-forms.ts). A planted leak proves
 * the search finds one.
 */

interface HostileStick {
  name: string;
  /** The secrets (and distinctive pieces of them) this stick carries, in whatever shape. */
  secrets: string[];
  /** Writes the stick into `dir` (which has secrets/admin.pw and certs/ already). */
  build(dir: string, device: StickTarget): void;
}

const pin = (device: StickTarget): string => `    tls: { fingerprint_sha256: "${device.fingerprintSha256}" }`;
const mp = (device: StickTarget, lines: string[]): string =>
  ['version: 1', 'monitoring_points:', '  - name: mp1', `    url: ${device.url}`, ...lines, ''].join('\n');
const yaml = (dir: string, text: string | Buffer): void => writeFileSync(join(dir, 'mpprov.yaml'), text);

const STICKS: HostileStick[] = [
  {
    name: 'unresolved alias under a secret key',
    secrets: ['Star-Secret-21'],
    build: (dir, d) => yaml(dir, mp(d, ['    password: *Star-Secret-21', pin(d)])),
  },
  {
    name: 'unresolved alias as the device list',
    secrets: [],
    build: (dir) => yaml(dir, 'version: 1\nmonitoring_points: *nope\n'),
  },
  {
    name: 'broken YAML after a quoted "password": key',
    secrets: ['Quoted-Secret-55'],
    build: (dir, d) => yaml(dir, mp(d, ['    "password": [Quoted-Secret-55', pin(d)])),
  },
  {
    name: 'mpprov.yaml linked out of the stick',
    secrets: ['Outside-Secret-31'],
    build: (dir, d) => {
      const outside = join(tempFolder('outside'), 'shadow.yaml');
      writeFileSync(outside, mp(d, ['    password: Outside-Secret-31', pin(d)]));
      symlinkSync(outside, join(dir, 'mpprov.yaml'));
    },
  },
  {
    name: 'a FIFO as password_file and ca_cert',
    secrets: ['Fifo-Stick-Secret-44'],
    build: (dir, d) => {
      execFileSync('mkfifo', [join(dir, 'secrets', 'pipe'), join(dir, 'certs', 'pipe.pem')]);
      yaml(
        dir,
        mp(d, [
          '    password_file: secrets/pipe',
          pin(d),
          '    interfaces:',
          '      eth1:',
          '        ipv4: { method: dhcp }',
          '        dot1x: { eap: peap, inner: mschapv2, identity: x@corp.example, password: "Fifo-Stick-Secret-44", ca_cert: certs/pipe.pem }',
        ]),
      );
    },
  },
  {
    name: 'credentials in the device URL',
    secrets: ['Url-Secret-88'],
    build: (dir, d) =>
      yaml(
        dir,
        [
          'version: 1',
          'monitoring_points:',
          '  - name: mp1',
          `    url: ${d.url.replace('https://', 'https://admin:Url-Secret-88@')}`,
          '    password_file: secrets/admin.pw',
          pin(d),
          '',
        ].join('\n'),
      ),
  },
  {
    name: 'a wrapped passphrase and a flow-style password cut by ", "',
    secrets: ['Wrapped-Secret -Continued-19', 'Wrapped-Secret', '-Continued-19', 'Flow, Secret-63', 'Secret-63'],
    build: (dir, d) =>
      yaml(
        dir,
        mp(d, [
          '    password_file: secrets/admin.pw',
          pin(d),
          '    interfaces:',
          '      wlan0:',
          '        wireless:',
          '          ssid: Corp',
          '          security: wpa2-personal',
          '          passphrase: Wrapped-Secret',
          '            -Continued-19',
          '        ipv4: { method: dhcp }',
          '      eth1:',
          '        ipv4: { method: dhcp }',
          '        dot1x: { eap: peap, inner: mschapv2, identity: x@corp.example, password: Flow, Secret-63 }',
        ]),
      ),
  },
  {
    name: 'a " #" comment inside an unquoted password',
    secrets: ['Peap-Pass #42', 'Peap-Pass'],
    build: (dir, d) =>
      yaml(
        dir,
        mp(d, [
          '    password_file: secrets/admin.pw',
          pin(d),
          '    interfaces:',
          '      eth1:',
          '        ipv4: { method: dhcp }',
          '        dot1x:',
          '          eap: peap',
          '          inner: mschapv2',
          '          identity: x@corp.example',
          '          password: Peap-Pass #42',
        ]),
      ),
  },
  {
    name: 'Latin-1 and NUL bytes in secret values',
    secrets: ['n-Secret-12', '-Secret-13', 'Latén-Secret-12'],
    build: (dir, d) =>
      yaml(
        dir,
        Buffer.concat([
          Buffer.from(
            mp(d, [
              '    password_file: secrets/admin.pw',
              pin(d),
              '    interfaces:',
              '      eth1:',
              '        ipv4: { method: dhcp }',
              '        dot1x:',
              '          eap: peap',
              '          inner: mschapv2',
              '          identity: x@corp.example',
            ]).trimEnd(),
          ),
          Buffer.from('\n          password: "Lat'),
          Buffer.from([0xe9]),
          Buffer.from(
            'n-Secret-12"\n      eth2:\n        ipv4: { method: dhcp }\n        dot1x: { eap: md5, identity: y, password: "Nul',
          ),
          Buffer.from([0]),
          Buffer.from('-Secret-13" }\n'),
        ]),
      ),
  },
  {
    name: 'a mistyped secret key and an escaped copy of a secret',
    secrets: ['Hunter-Secret-42', 'Escaped-Secret-77'],
    build: (dir, d) =>
      yaml(
        dir,
        mp(d, [
          '    pasword: Hunter-Secret-42',
          '    password: "Escaped-Secret-77"',
          pin(d),
          '    interfaces:',
          '      eth1:',
          '        ipv4: { method: dhcp, descripton: "\\x45scaped-Secret-77", notes: "\\u0045scaped-\\u0053ecret-77" }',
        ]),
      ),
  },
  {
    name: 'a device that echoes our body base64/hex/URL-encoded in a 400',
    secrets: ['Echoed-SeCrEt-Pass', 'Echo-Dot1x-Secret-71'],
    build: (dir, d) =>
      yaml(
        dir,
        mp(d, [
          '    password_file: secrets/admin.pw',
          pin(d),
          '    interfaces:',
          '      wlan0:',
          '        wireless: { ssid: Corp, security: wpa2-personal, passphrase: "Echoed-SeCrEt-Pass" }',
          '        ipv4: { method: dhcp }',
          '      eth1:',
          '        ipv4: { method: dhcp }',
          '        dot1x: { eap: md5, identity: y, password: "Echo-Dot1x-Secret-71" }',
        ]),
      ),
  },
];

/** Every secret: each stick's, the admin password on every stick, and its Basic pair. */
const SECRETS = [...STICKS.flatMap((s) => s.secrets), PROFILE_ADMIN_PASSWORD, `admin:${PROFILE_ADMIN_PASSWORD}`];

/** Every (output, form) where a form of a secret shows: the one search every assertion here uses. */
export function findLeaks(outputs: ReadonlyMap<string, Buffer>, secrets: readonly string[]): string[] {
  const forms = [...new Set(secrets.flatMap(secretForms))];
  if (forms.length === 0 || outputs.size === 0) throw new Error('findLeaks: nothing to search');
  const found: string[] = [];
  for (const [name, bytes] of outputs) {
    for (const text of [bytes.toString('utf8'), bytes.toString('latin1')]) {
      for (const form of forms)
        if (text.includes(form) && !found.includes(`${name}: ${form}`)) found.push(`${name}: ${form}`);
    }
  }
  return found;
}

function stickFolder(parent: string, stick: HostileStick, device: StickTarget): string {
  const dir = join(parent, stick.name.replace(/[^A-Za-z0-9]+/g, '-').slice(0, 40));
  mkdirSync(dir, { recursive: true });
  cpSync(join(profilesDir, 'certs'), join(dir, 'certs'), { recursive: true });
  cpSync(join(profilesDir, 'secrets'), join(dir, 'secrets'), { recursive: true });
  stick.build(dir, device);
  return dir;
}

/** What mpprov wrote on a stick: its log and result files. */
function writtenOnStick(dir: string, label: string): [string, Buffer][] {
  return readdirSync(dir)
    .filter((n) => /^(usb\.log|mpprov-result\.json|mpprov-.*\.txt)$/i.test(n))
    .map((n) => [`${label}/${n}`, readFileSync(join(dir, n))]);
}

describe('every byte mpprov writes for the hostile sticks', () => {
  const devices: EchoingDevice[] = [];
  const mounts: string[] = [];
  const rig = useAgentRig({ fatSticks: false });
  afterEach(() => {
    for (const d of devices.splice(0)) d.close();
    for (const dir of mounts.splice(0).reverse())
      if (spawnSync('mountpoint', ['-q', dir]).status === 0) execFileSync('umount', ['-l', dir]);
  });

  it('the search finds a planted leak in any form, in any output', () => {
    const planted = new Map([
      ['planted/usb.log', Buffer.from(`note ${Buffer.from('Star-Secret-21').toString('hex')} end`)],
    ]);
    expect(findLeaks(planted, SECRETS)).toEqual([`planted/usb.log: ${Buffer.from('Star-Secret-21').toString('hex')}`]);
  });

  it('validate, plan and apply (text and --json): no secret in any output', { timeout: 300_000 }, async () => {
    const device = await startEchoingDevice('encoded');
    devices.push(device);
    const parent = tempFolder('every-byte-cli');
    const outputs = new Map<string, Buffer>();
    for (const stick of STICKS) {
      const dir = stickFolder(parent, stick, device);
      const state = stateDir();
      const engine = ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', state];
      const runs: [string, string[]][] = [
        ['validate', ['validate', dir]],
        ['validate --json', ['validate', '--json', dir]],
        ['plan', ['plan', dir, ...engine]],
        ['plan --json', ['plan', dir, ...engine, '--json']],
        ['apply', ['apply', dir, ...engine]],
        ['apply --json', ['apply', dir, ...engine, '--json']],
      ];
      const results = await Promise.all(runs.map(async ([what, args]) => [what, await runCli(args)] as const));
      for (const [what, result] of results) {
        // Never a crash: a hostile stick is an answer (0 with a warning, 1 invalid or failed, 2 changes to plan), never a stack trace.
        expect([0, 1, 2], `${stick.name}: ${what}\n${result.stdout}${result.stderr}`).toContain(result.code);
        expect(result.stderr, `${stick.name}: ${what}`).not.toMatch(/\n\s+at /);
        outputs.set(`${stick.name}: ${what}: stdout`, Buffer.from(result.stdout));
        outputs.set(`${stick.name}: ${what}: stderr`, Buffer.from(result.stderr));
      }
      for (const [file, bytes] of await allFiles(state)) outputs.set(`${stick.name}: state ${file}`, bytes);
    }
    expect(outputs.size).toBeGreaterThan(STICKS.length * 12);
    // The echoing device was reached and refused our changes: its echo was in play.
    expect([...outputs].some(([name, bytes]) => name.includes('echoes') && bytes.toString().includes('(secret)'))).toBe(
      true,
    );
    expect(findLeaks(outputs, SECRETS)).toEqual([]);
    // The same search on the same outputs, with one planted leak, finds exactly that one.
    const planted = Buffer.from(`x ${encodeURIComponent('Peap-Pass #42')} y`);
    const found = findLeaks(new Map([...outputs, ['planted', planted]]), SECRETS);
    expect(found).toContain(`planted: ${encodeURIComponent('Peap-Pass #42')}`);
    expect(found.filter((f) => !f.startsWith('planted: '))).toEqual([]);
  });

  it(
    'the daemon with each stick on a real tmpfs mount: no secret in usb.log, the result files, the state folder or the journal',
    { timeout: 180_000 },
    async () => {
      const device = await startEchoingDevice('encoded');
      devices.push(device);
      const world = await rig.makeWorld();
      const agent = await rig.startAgent(world);
      const staged: { label: string; dir: string }[] = [];
      for (const [index, stick] of STICKS.entries()) {
        const label = `HOSTILE${index}`;
        const staging = join(world.dir, `staging-${index}`);
        mkdirSync(staging);
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', staging]);
        mounts.push(staging);
        // The stick's files at its root: build into the mount itself.
        const built = stickFolder(staging, stick, device);
        execFileSync('sh', ['-c', `mv "${built}"/* "${staging}"/ && rmdir "${built}"`]);
        const mountPoint = join(world.mediaRoot, label);
        mkdirSync(mountPoint);
        execFileSync('mount', ['--bind', staging, mountPoint]);
        mounts.push(mountPoint);
        staged.push({ label, dir: staging });
        // One at a time: each job ends before the next stick arrives.
        await waitForJobEnds(world, index + 1, agent, 60_000);
      }
      const ends = await waitForJobEnds(world, STICKS.length, agent);
      expect(ends.map((e) => e.result)).toEqual(STICKS.map(() => 'FAILED'));
      const outputs = new Map<string, Buffer>([
        ['agent output', Buffer.from(await agent.output())],
        ...(await allFiles(world.stateDir)),
      ]);
      for (const { label, dir } of staged)
        for (const [name, bytes] of writtenOnStick(dir, label)) outputs.set(name, bytes);
      expect([...outputs.keys()].filter((n) => n.endsWith('/usb.log'))).toHaveLength(STICKS.length);
      // The echoing device was reached and refused our changes: its echo was in play.
      const echoLog = outputs.get(`HOSTILE${STICKS.length - 1}/usb.log`)?.toString() ?? '';
      expect(echoLog).toContain('the device refused POST /interface/');
      expect(echoLog).toContain('wpa_password=(secret)|(secret)|(secret)');
      expect((await agent.stop()).code).toBe(0);
      outputs.set('agent output (after stop)', Buffer.from(await agent.output()));
      expect(findLeaks(outputs, SECRETS)).toEqual([]);
      const planted = Buffer.from(`x ${Buffer.from(PROFILE_ADMIN_PASSWORD).toString('base64')} y`);
      const found = findLeaks(new Map([...outputs, ['planted', planted]]), SECRETS);
      expect(found).toContain(`planted: ${Buffer.from(PROFILE_ADMIN_PASSWORD).toString('base64')}`);
      expect(found.filter((f) => !f.startsWith('planted: '))).toEqual([]);
    },
  );
});
