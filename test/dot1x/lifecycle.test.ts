import { spawnSync } from 'node:child_process';
import { chmod, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createRealDot1xBackend,
  liveLabs,
  loadAuthenticatorProfile,
  startSimulator,
  type AuthenticatorProfile,
  type LabNames,
} from '../../src/simulator/index.js';
import { applyFile } from '../apply/apply-helpers.js';
import { repoRoot, runCli, useProcesses, type StartedProcess } from '../support/run-cli.js';
import { worldReadableCli } from '../support/world-readable-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import {
  PROFILE_ADMIN_PASSWORD,
  PROFILE_DEVICE,
  stateDir,
  stickHead,
  stickWithConfig,
} from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';
import { assertRealBackendCanRun, isAlive, leftoversOf, NOTHING_LEFT, pidsIn } from './real-lab.js';

/**
 * The real backend's namespaces, veth pair, daemons and files are per simulator instance and
 * always removed: on close, when a simulator fails to start, on SIGTERM, SIGINT and SIGHUP, after
 * an uncaught error; after a SIGKILL the daemons die with the process and the next lab removes
 * the rest. Two simulators run side by side. `mpprov simulate --dot1x-backend real` says which
 * backend it uses, serves `mpprov apply`, and refuses to run without root, in one sentence.
 */

const PORT = fileURLToPath(new URL('../fixtures/dot1x/port.yaml', import.meta.url));
const PEAP_ETH1 =
  '    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n' +
  '        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password_file: secrets/mp01-peap.pw, ca_cert: certs/radius-ca.pem }\n';

const dir = tempFolder('dot1x-life');
const processes = useProcesses();
const { start: startProfileDevice } = useSimulators(PROFILE_DEVICE);
let profile: AuthenticatorProfile;

beforeAll(async () => {
  profile = await loadAuthenticatorProfile(PORT);
  // Readable by "nobody": one test runs the command without root.
  await chmod(dir, 0o755);
  // Drops to uid/gid 65534, then runs the script named next as if started directly.
  await writeFile(
    join(dir, 'as-nobody.mjs'),
    `process.setgid(65534);\nprocess.setuid(65534);\nprocess.argv.splice(1, 1);\nawait import(process.argv[1]);\n`,
  );
  // A process holding one real lab: authenticates in a loop (about 2 s each, without the kick),
  // or throws an uncaught error. Prints its lab's names first.
  await writeFile(
    join(dir, 'lab-holder.mjs'),
    `import { createRealDot1xBackend, parseAuthenticatorProfile } from '${repoRoot}dist/simulator/index.js';
const profile = await parseAuthenticatorProfile('eap_methods: [md5]\\nusers:\\n  - { identity: u, password: p, methods: [md5] }\\n', '/nonexistent/port.yaml');
const backend = await createRealDot1xBackend({ kickAuthenticator: false });
process.stdout.write(JSON.stringify(backend.names) + '\\n');
const stanza = { name: 'eth1', family: 'inet', method: 'dhcp', wpa_key_mgmt: 'IEEE8021X', wpa_eap: 'MD5', wpa_identity: 'u', wpa_password: 'p' };
if (process.argv[2] === 'throw') setTimeout(() => { throw new Error('an uncaught error (test)'); }, 100);
else for (;;) await backend.authenticate(profile, stanza, { get: () => undefined });
`,
  );
});

const start = processes.startNode;
const simulate = (args: string[]) => processes.startCli(['simulate', ...args]);

async function until(done: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const namespaceExists = (name: string) =>
  (spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout ?? '')
    .split('\n')
    .some((l) => l.split(' ')[0] === name);

/** Starts a lab holder and waits until hostapd and wpa_supplicant both run in its namespaces. */
async function holderMidAuthentication(): Promise<{ started: StartedProcess; names: LabNames; daemons: number[] }> {
  const started = await start([join(dir, 'lab-holder.mjs'), 'loop']);
  expect(started.stderr()).toBe('');
  const names = JSON.parse(started.firstLine) as LabNames;
  let daemons: number[] = [];
  await until(() => {
    const auth = pidsIn(names.authNamespace);
    const supp = pidsIn(names.supplicantNamespace);
    daemons = [...auth, ...supp];
    return auth.length > 0 && supp.length > 0;
  }, 'hostapd and wpa_supplicant in the lab');
  return { started, names, daemons };
}

describe('the machine', () => {
  it('runs the real backend: root, and hostapd, hostapd_cli, wpa_supplicant and ip installed', () => {
    assertRealBackendCanRun();
  });
});

describe('in-process', () => {
  it('a backend builds two namespaces, a veth pair and a 0700 folder, all named after the process, and close() removes them', async () => {
    assertRealBackendCanRun();
    const backend = await createRealDot1xBackend();
    const n = backend.names;
    try {
      expect(n.id).toMatch(new RegExp(`^mpsim-${process.pid}-\\d+$`));
      expect([n.authNamespace, n.supplicantNamespace]).toEqual([`${n.id}-auth`, `${n.id}-supp`]);
      expect(namespaceExists(n.authNamespace) && namespaceExists(n.supplicantNamespace)).toBe(true);
      const link = spawnSync('ip', ['-n', n.authNamespace, '-o', 'link', 'show', n.authInterface], {
        encoding: 'utf8',
      }).stdout;
      expect(link).toContain(`${n.authInterface}@`);
      // Neither end of the veth is in our own namespace: nothing can leave the lab.
      expect(leftoversOf(process.pid).links).toEqual([]);
      expect((await stat(n.dir)).mode & 0o777).toBe(0o700);
      expect(liveLabs().map((l) => l.id)).toContain(n.id);
    } finally {
      await backend.close();
    }
    expect(liveLabs()).toEqual([]);
    expect(leftoversOf(process.pid)).toEqual(NOTHING_LEFT);
  });

  it('a simulator that cannot start removes the lab it made', async () => {
    assertRealBackendCanRun();
    await expect(startSimulator({ dot1xBackend: 'real', switchPorts: { wlan0: profile } })).rejects.toThrow(
      'Switch port "wlan0" faces a wireless interface; the real 802.1X backend drives wired ports only.',
    );
    expect(leftoversOf(process.pid)).toEqual(NOTHING_LEFT);
  });

  it('two simulators at once, each with its own namespaces, both authorize on the wire', async () => {
    assertRealBackendCanRun();
    const starting = await Promise.allSettled(
      [1, 2].map(() => startProfileDevice({ switchPorts: { eth1: profile }, dot1xBackend: 'real' })),
    );
    const devices = starting.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      expect(starting.map((s) => (s.status === 'rejected' ? String(s.reason) : 'started'))).toEqual([
        'started',
        'started',
      ]);
      expect(devices.map((d) => d.dot1xBackend)).toEqual(['real', 'real']);
      const labs = liveLabs();
      expect(new Set(labs.flatMap((l) => [l.authNamespace, l.supplicantNamespace])).size).toBe(4);
      const results = await Promise.all(devices.map((d) => applyFile(stickWithConfig(stickHead(d, PEAP_ETH1)))));
      expect(results.map((r) => r.result.outcome)).toEqual(['changed', 'changed']);
      for (const d of devices)
        expect(d.state().dot1x['eth1']?.reason).toMatch(/^authorized on the wire by PEAP-MSCHAPv2/);
    } finally {
      await Promise.all(devices.map((d) => d.close()));
    }
    expect(leftoversOf(process.pid)).toEqual(NOTHING_LEFT);
  }, 60_000);
});

describe('a process holding a lab', () => {
  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
    '%s in the middle of an authentication: daemons, namespaces and folder go, and the signal still ends it',
    async (signal) => {
      assertRealBackendCanRun();
      const { started, daemons } = await holderMidAuthentication();
      started.child.kill(signal);
      expect(await started.exited).toEqual({ code: null, signal });
      // Killed before the holder ended; `until` only gives pid 1 a moment to reap them.
      await until(() => daemons.every((pid) => !isAlive(pid)), 'the daemons to be gone', 5_000);
      expect(leftoversOf(started.child.pid!)).toEqual(NOTHING_LEFT);
    },
    30_000,
  );

  it('an uncaught error: removed on the way out', async () => {
    assertRealBackendCanRun();
    const started = await start([join(dir, 'lab-holder.mjs'), 'throw']);
    expect((await started.exited).code).toBe(1);
    expect(started.stderr()).toContain('an uncaught error (test)');
    expect(leftoversOf(started.child.pid!)).toEqual(NOTHING_LEFT);
  }, 30_000);

  it('SIGKILL: the daemons die with it, and the next lab on the machine removes its namespaces and folder', async () => {
    assertRealBackendCanRun();
    const { started, names, daemons } = await holderMidAuthentication();
    started.child.kill('SIGKILL');
    await started.exited;
    await until(() => daemons.every((pid) => !isAlive(pid)), 'the daemons to die with their parent', 5_000);
    // Nothing can run on SIGKILL: the namespaces are still there...
    expect(namespaceExists(names.authNamespace)).toBe(true);
    // ...until another lab starts.
    const next = await createRealDot1xBackend();
    await next.close();
    expect(leftoversOf(started.child.pid!)).toEqual(NOTHING_LEFT);
    expect(leftoversOf(process.pid)).toEqual(NOTHING_LEFT);
  }, 30_000);
});

describe('mpprov simulate --dot1x-backend real', () => {
  it('says so, serves a stick applied by mpprov apply on the wire, and leaves nothing after SIGTERM', async () => {
    assertRealBackendCanRun();
    const sim = await simulate([
      '--json',
      '--dot1x-backend',
      'real',
      '--switch',
      `eth1=dot1x:${PORT}`,
      '--password',
      PROFILE_ADMIN_PASSWORD,
      '--restart-ms',
      '200',
      '--no-rate-limit',
    ]);
    expect(sim.stderr()).toBe('');
    const info = JSON.parse(sim.firstLine) as Record<string, string>;
    expect(info['dot1x_backend']).toBe('real');
    expect(leftoversOf(sim.child.pid!).namespaces).toHaveLength(2);

    const head = `version: 1\nmonitoring_points:\n  - name: mp1\n    url: ${info['url']}\n    password_file: secrets/admin.pw\n    tls: { fingerprint_sha256: "${info['fingerprint_sha256']}" }\n`;
    const stick = stickWithConfig(head + PEAP_ETH1);
    const applied = await runCli([
      'apply',
      stick,
      '--agent-config',
      '/nonexistent/agent.yaml',
      '--state-dir',
      stateDir(),
    ]);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const control = (await (await fetch(`${info['control_url']}/state`)).json()) as {
      state: { dot1x: Record<string, { state: string; reason: string }> };
    };
    expect(control.state.dot1x['eth1']?.state).toBe('authorized');
    expect(control.state.dot1x['eth1']?.reason).toMatch(
      /^authorized on the wire by PEAP-MSCHAPv2 as "mp01@corp.example"/,
    );

    sim.child.kill('SIGTERM');
    expect(await sim.exited).toEqual({ code: 0, signal: null });
    expect(leftoversOf(sim.child.pid!)).toEqual(NOTHING_LEFT);
  }, 60_000);

  it('names the backend in its text banner and stops cleanly on SIGINT', async () => {
    assertRealBackendCanRun();
    const sim = await simulate(['--dot1x-backend', 'real', '--password', 'pw-text']);
    await until(() => sim.stdout().includes('Stop with Ctrl-C.'), 'the banner');
    const pid = sim.child.pid!;
    expect(sim.stdout()).toMatch(
      new RegExp(
        `\\n {2}802\\.1X: {7}real: hostapd v\\S+, wpa_supplicant v\\S+ in network namespaces mpsim-${pid}-1-auth and mpsim-${pid}-1-supp\\n`,
      ),
    );
    sim.child.kill('SIGINT');
    expect(await sim.exited).toEqual({ code: 0, signal: null });
    expect(leftoversOf(pid)).toEqual(NOTHING_LEFT);
  }, 30_000);

  it('keeps the model backend by default, and says so', async () => {
    const sim = await simulate(['--password', 'pw-text']);
    await until(() => sim.stdout().includes('Stop with Ctrl-C.'), 'the banner');
    expect(sim.stdout()).toContain(
      '\n  802.1X:       model: decided in-process from certificates and passwords (--dot1x-backend real runs hostapd and wpa_supplicant)\n',
    );
    sim.child.kill('SIGTERM');
    expect((await sim.exited).code).toBe(0);
    expect(leftoversOf(sim.child.pid!)).toEqual(NOTHING_LEFT);
  }, 30_000);

  it('refuses to run without root, in one sentence, and does not fall back to the model', async () => {
    // A copy "nobody" can read, wherever this checkout lives (a clone under a 0700 folder included).
    const sim = await start([join(dir, 'as-nobody.mjs'), worldReadableCli(), 'simulate', '--dot1x-backend', 'real']);
    expect(await sim.exited).toEqual({ code: 64, signal: null });
    expect(sim.stdout()).toBe('');
    expect(sim.stderr()).toMatch(
      /^mpprov simulate: The real 802\.1X backend needs root \(this process runs as uid 65534\)( and the commands? [^.]+)?\.\n$/,
    );
  }, 30_000);

  it('refuses an unknown backend name', async () => {
    const sim = await simulate(['--dot1x-backend', 'radius']);
    expect(await sim.exited).toEqual({ code: 64, signal: null });
    expect(sim.stderr()).toBe('mpprov simulate: --dot1x-backend must be model or real; "radius" is not.\n');
  });
});
