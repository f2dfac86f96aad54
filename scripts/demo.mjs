#!/usr/bin/env node
// The newcomer's tour: start a simulated Monitoring Point, provision it from a profile exactly as a
// stick would be provisioned, show the steps, the result and what the device now runs, run the
// same stick again to show that an unchanged stick changes nothing, then let the agent
// (`mpprov run`) take the stick and show the usb.log it writes.
// Run with `npm run demo` (it builds first). Everything stays on loopback and in one temp folder,
// removed at the end however the demo ends (MPPROV_DEMO_KEEP=1 keeps it to look around).
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// The command package.json's bin names (the bundle's launcher), as `npx mpprov` runs it.
const mpprovBin = join(root, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).bin.mpprov);
const { startSimulator } = await import(join(root, 'dist/simulator/index.js'));
const { startServiceSimulator } = await import(join(root, 'dist/simulator/service/index.js'));
const profile = process.argv[2] ?? 'vlan-dot1x.yaml';

// One folder for everything the demo writes (stick, state, the agent's world), so one removal cleans up.
const demoDir = mkdtempSync(join(tmpdir(), 'mpprov-demo-'));
const mounts = new Set();
const cleanup = () => {
  for (const mountPoint of mounts) {
    try {
      execFileSync('fusermount', ['-u', '-z', mountPoint], { stdio: 'ignore' });
    } catch {
      // already unmounted (the agent releases a stick itself when its job is done)
    }
  }
  if (process.env.MPPROV_DEMO_KEEP === '1') console.log(`kept ${demoDir}`);
  else rmSync(demoDir, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    cleanup();
    process.exit(130);
  });
}

const say = (text) => process.stdout.write(`\n=== ${text}\n`);
const cli = (args) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [mpprovBin, ...args], { stdio: 'inherit' });
    child.on('close', (code) => resolve(code));
  });
/** The same, with stdout and stderr captured: `{ status, stdout, stderr }`. */
const cliCapture = (args) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [mpprovBin, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });

say('1. Start a simulated Monitoring Point (m50: eth0, eth1, wlan0) and the monitoring service, on loopback');
// The MP's hostname in the service: the profile's monitoring point name (the post-check's default).
const hostname = /- name: (\S+)/.exec(readFileSync(join(root, 'profiles', profile), 'utf8'))?.[1] ?? 'mp1';
// The service sees the MP UNAVAILABLE from its restart until 2 s after it answers again, and a
// path's first data comes 1.5 s after it exists and its MP is AVAILABLE (the real service's is
// minutes; `mpprov simulate --service-path-data-ms` sets the same).
const service = await startServiceSimulator({ reconnectMs: 2000, pathDataMs: 1500, tokens: [{ label: 'demo' }] });
service.registerAppliance({ hostname, macAddress: '00:1b:21:3a:4f:10' });
const device = await startSimulator({
  hooks: {
    restartStarted: () => service.restartStarted(hostname),
    answeringAgain: () => service.answeringAgain(hostname),
    managementDot1xFailed: () => service.managementDot1xFailed(hostname),
  },
  password: readFileSync(join(root, 'profiles/secrets/admin.pw'), 'utf8').trim(),
  certificatePem: readFileSync(join(root, 'profiles/certs/device-https-cert.pem'), 'utf8'),
  privateKeyPem: readFileSync(join(root, 'profiles/certs/device-https-key.pem'), 'utf8'),
  restartMs: 1500,
});
console.log(`device ${device.url}, certificate SHA-256 ${device.fingerprintSha256}`);
console.log(
  `service ${service.url}, which knows the MP as "${hostname}" (reconnect delay 2 s after a restart, a path's first data 1.5 s after it exists)`,
);

try {
  say(
    `2. Prepare a stick from profiles/${profile}, pointed at the simulated device, with two network paths to measure`,
  );
  const stick = join(demoDir, 'stick');
  mkdirSync(stick);
  cpSync(join(root, 'profiles'), stick, { recursive: true });
  const file = join(stick, 'mpprov.yaml');
  // The targets are documentation addresses and names: data for the simulated service, never reached.
  const paths =
    '    paths:\n' +
    '      - target: 192.0.2.80\n' +
    '        location: Datacenter Frankfurt\n' +
    '      - target: app.example.com\n';
  writeFileSync(
    file,
    readFileSync(join(stick, profile), 'utf8').replace(
      '    url: https://192.0.2.10\n',
      `    url: ${device.url}\n${paths}`,
    ),
  );
  console.log(readFileSync(file, 'utf8'));
  const state = join(demoDir, 'state');
  const agentYaml = writeServiceAgentYaml(stick, state);
  const engine = ['--agent-config', agentYaml, '--state-dir', state];
  console.log(`agent.yaml with the service block:\n${readFileSync(agentYaml, 'utf8')}`);

  say('2b. mpprov service check: TLS, the token, the organizations it sees');
  await cli(['service', 'check', '--agent-config', agentYaml]);

  say('3. mpprov validate: the file and every certificate it names');
  await cli(['validate', file, '--agent-config', agentYaml]);

  say(
    "3b. The same stick with its 802.1X password file saved by an old editor in Latin-1: refused, naming the file and never the password (its 'ü' would reach the device as another letter)",
  );
  const careless = join(demoDir, 'careless-stick');
  cpSync(stick, careless, { recursive: true });
  writeFileSync(join(careless, 'secrets/mp01-peap.pw'), Buffer.from('Gr\u00fcn-Dot1x-2026\n', 'latin1'));
  await cli(['validate', join(careless, 'mpprov.yaml'), '--agent-config', agentYaml]);

  say(
    '4. mpprov plan: what would change (secrets only as "(changed)"), and the paths it would create (the service is only read)',
  );
  await cli(['plan', file, ...engine]);

  say(
    `4b. mpprov plan --json --limit ${hostname}: what a script or the Ansible collection reads (the version line, then the structured diff)`,
  );
  // Never a synchronous child here: the simulated device answers from this very process.
  const planRun = await cliCapture(['plan', file, '--json', '--limit', hostname, ...engine]);
  for (const line of planRun.stdout.split('\n').filter((l) => l.trim() !== '')) {
    const event = JSON.parse(line);
    if (event.type === 'version') console.log(line);
    if (event.type === 'plan') console.log(`diff of ${event.device}:\n${JSON.stringify(event.diff, null, 2)}`);
  }
  if (planRun.status !== 0 && planRun.status !== 2) process.stdout.write(`${planRun.stdout}${planRun.stderr}`);
  console.log(`exit status ${planRun.status} (2: there are changes to make)`);

  say(
    '5. mpprov apply: upload, post, restart networking, ride out the outage, verify, confirm the service sees it, create the two paths, wait until they measure',
  );
  const code = await cli(['apply', file, ...engine]);
  console.log(`exit status ${code}`);

  say('6. What the device runs now (its active view)');
  for (const iface of device.state().interfaces.active) console.log(JSON.stringify(iface));

  say(
    '7. The same stick again: nothing to change, no restart (the service still sees it, the paths exist and measure)',
  );
  await cli(['apply', file, ...engine]);
  const writes = device.requests().filter((r) => r.method !== 'GET').length;
  console.log(`networking restarts on the device: ${device.state().restarts}; write requests in total: ${writes}`);

  await device.reset();
  say('8. The agent (mpprov run, as under systemd) and a stick, on the device reset to factory state');
  await runAgentDemo(stick, file);
} finally {
  await device.close();
  await service.close();
  cleanup();
}

/** agent.yaml with the service block: the token and the service's CA in files beside it. */
function writeServiceAgentYaml(dir, stateDir) {
  writeFileSync(join(dir, 'service.token'), `${service.token}\n`, { mode: 0o600 });
  writeFileSync(join(dir, 'service-ca.pem'), service.caPem);
  const file = join(dir, 'agent.yaml');
  writeFileSync(file, serviceBlock(dir, `state_dir: ${stateDir}\n`));
  return file;
}

function serviceBlock(dir, head) {
  return `${head}service:\n  url: ${service.url}\n  token_file: ${join(dir, 'service.token')}\n  tls: { ca: ${join(dir, 'service-ca.pem')} }\n  wait_connected_s: 30\n  wait_measuring_s: 60\n`;
}

/**
 * The service path: `mpprov run` watching a media root. With FUSE and the FAT tools (root,
 * /dev/fuse, dosfstools, mtools, fusefat) a real FAT image is mounted as a stick and usb.log is
 * read back from it; otherwise the profile is dropped into a watched profiles folder and the same
 * job log is shown from the state folder.
 */
async function runAgentDemo(stickDir, configFile) {
  const world = join(demoDir, 'agent');
  mkdirSync(world);
  const media = join(world, 'media');
  const profilesDir = join(world, 'profiles');
  const state = join(world, 'state');
  mkdirSync(media);
  mkdirSync(profilesDir);
  const fat = canMountFat();
  // The status page on a free loopback port (the packaged agent.yaml uses 127.0.0.1:8471).
  writeFileSync(
    join(world, 'agent.yaml'),
    serviceBlock(
      stickDir,
      `version: 1\nmedia_roots: [${media}]\nprofiles_dirs: [${profilesDir}]\nstate_dir: ${state}\nstatus_page: { listen: "127.0.0.1:0" }\n`,
    ),
  );
  const runtime = join(world, 'run');
  const out = join(world, 'agent.out');
  const fd = openSync(out, 'a');
  const agent = spawn(process.execPath, [mpprovBin, 'run', '--agent-config', join(world, 'agent.yaml')], {
    stdio: ['ignore', fd, fd],
    env: { ...process.env, RUNTIME_DIRECTORY: runtime },
  });
  closeSync(fd);
  const agentOutput = () => readFileSync(out, 'utf8');
  // The desktop companion, with a notify-send that prints its arguments instead of popping up.
  const notifyOut = join(world, 'notify.out');
  const notify = startNotify(world, join(runtime, 'status.json'), notifyOut);
  try {
    await until(() => agentOutput().includes('watching media roots'), 15_000, 'the agent to start');
    const pageUrl = /status page at (http:\/\/\S+)/.exec(agentOutput())?.[1];
    if (pageUrl !== undefined) console.log(`the status page is at ${pageUrl} (live: WORKING, then SAFE TO REMOVE)`);
    let logText;
    if (fat) {
      console.log('FUSE and the FAT tools are here: a real FAT stick (mkfs.vfat, mcopy, fusefat)');
      const image = join(world, 'stick.img');
      makeFatImage(image, stickDir, configFile);
      const mountPoint = join(media, 'MPSTICK');
      mkdirSync(mountPoint);
      mounts.add(mountPoint);
      const fuseLog = openSync(join(world, 'fusefat.log'), 'a');
      const fuse = spawn('fusefat', ['-f', '-o', 'rw+', image, mountPoint], { stdio: ['ignore', fuseLog, fuseLog] });
      closeSync(fuseLog);
      const fuseExited = new Promise((resolve) => fuse.once('exit', resolve));
      await until(() => jobEnds(state) >= 1, 60_000, 'the stick job to end');
      // The agent unmounts the stick itself once its result is written (when_done.eject).
      await Promise.race([fuseExited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (fuse.exitCode === null) {
        execFileSync('fusermount', ['-u', mountPoint]);
        await fuseExited;
      } else console.log('the agent unmounted the stick itself: safe to remove');
      mounts.delete(mountPoint);
      logText = execFileSync('mcopy', ['-n', '-i', image, '::usb.log', '-'], {
        env: { ...process.env, MTOOLS_SKIP_CHECK: '1' },
        encoding: 'utf8',
      });
      const names = execFileSync('mdir', ['-i', image, '-b', '::'], {
        env: { ...process.env, MTOOLS_SKIP_CHECK: '1' },
        encoding: 'utf8',
      });
      console.log(
        `at the stick's root: ${names
          .split('\n')
          .filter((l) => l.startsWith('::/'))
          .map((l) => l.slice(3))
          .join(', ')}`,
      );
      say('usb.log, read back from the unmounted FAT image');
    } else {
      console.log('no FUSE/FAT tools here: the profile goes into a watched profiles folder instead');
      cpSync(join(stickDir, 'certs'), join(profilesDir, 'certs'), { recursive: true });
      cpSync(join(stickDir, 'secrets'), join(profilesDir, 'secrets'), { recursive: true });
      writeFileSync(join(world, 'staged.yaml'), readFileSync(configFile));
      renameSync(join(world, 'staged.yaml'), join(profilesDir, 'site.yaml'));
      await until(() => jobEnds(state) >= 1, 60_000, 'the profile job to end');
      const logs = readdirSync(join(state, 'logs'));
      logText = readFileSync(join(state, 'logs', logs[0]), 'utf8');
      say('the job log (what usb.log on a stick holds), from the state folder');
    }
    console.log(logText);
    if (pageUrl !== undefined) {
      say(`the status page's banner (${pageUrl}status.json), and the desktop notification`);
      const status = await (await fetch(`${pageUrl}status.json`)).json();
      for (const job of status.jobs)
        console.log(
          `${job.kind} ${job.label}: ${job.banner}${job.summary === undefined ? '' : ` - ${job.summary.split('\n')[0]}`}`,
        );
    }
    await until(
      () => existsSync(notifyOut) && readFileSync(notifyOut, 'utf8').includes('notify-send'),
      10_000,
      'the desktop notification',
    );
    console.log(readFileSync(notifyOut, 'utf8').trim());
    say('mpprov status');
    execFileSync(process.execPath, [mpprovBin, 'status', '--agent-config', join(world, 'agent.yaml')], {
      stdio: 'inherit',
    });
  } finally {
    notify.kill('SIGTERM');
    agent.kill('SIGTERM');
    await Promise.all([
      new Promise((resolve) => agent.once('exit', resolve)),
      new Promise((resolve) => notify.once('exit', resolve)),
    ]);
  }
}

/** `mpprov notify` following the agent's status file; its notify-send prints `notify-send: ARGS`. */
function startNotify(world, statusFile, outFile) {
  const bin = join(world, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'notify-send'), `#!/bin/sh\necho "notify-send: $*" >> '${outFile}'\n`, { mode: 0o755 });
  return spawn(process.execPath, [mpprovBin, 'notify', '--status-file', statusFile], {
    stdio: 'ignore',
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` },
  });
}

function canMountFat() {
  if (process.env.MPPROV_DEMO_NO_FAT === '1') return false; // to show the profiles-folder path
  const tools = ['mkfs.vfat', 'mcopy', 'mmd', 'fusefat', 'fusermount'];
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin'];
  return (
    existsSync('/dev/fuse') && process.getuid?.() === 0 && tools.every((t) => dirs.some((d) => existsSync(join(d, t))))
  );
}

function makeFatImage(image, stickDir, configFile) {
  const env = { ...process.env, MTOOLS_SKIP_CHECK: '1' };
  execFileSync('truncate', ['-s', '8M', image]);
  execFileSync(existsSync('/usr/sbin/mkfs.vfat') ? '/usr/sbin/mkfs.vfat' : 'mkfs.vfat', ['-n', 'MPSTICK', image], {
    stdio: 'ignore',
  });
  execFileSync('mcopy', ['-i', image, configFile, '::mpprov.yaml'], { env });
  for (const folder of ['certs', 'secrets']) {
    execFileSync('mmd', ['-i', image, `::${folder}`], { env });
    for (const name of readdirSync(join(stickDir, folder)))
      execFileSync('mcopy', ['-i', image, join(stickDir, folder, name), `::${folder}/${name}`], { env });
  }
}

function jobEnds(state) {
  const history = join(state, 'jobs.jsonl');
  if (!existsSync(history)) return 0;
  return readFileSync(history, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"event":"end"')).length;
}

async function until(check, timeoutMs, what) {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
