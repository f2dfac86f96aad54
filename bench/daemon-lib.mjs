// Shared parts of the daemon benchmarks (bench/daemon-*.mjs): a temporary world with an agent.yaml,
// `mpprov run` as a child process, FAT images mounted with fusefat. Prints nothing by itself.
import { execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const repoRoot = fileURLToPath(new URL('..', import.meta.url));
export const cli = join(repoRoot, 'dist/cli/main.js');
const mtoolsEnv = { ...process.env, MTOOLS_SKIP_CHECK: '1' };

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(check, timeoutMs, what) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

export async function makeWorld({ profiles = false } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'mpprov-bench-'));
  const world = {
    dir,
    mediaRoot: join(dir, 'media'),
    stateDir: join(dir, 'state'),
    profilesDir: join(dir, 'profiles'),
    agentConfig: join(dir, 'agent.yaml'),
  };
  await mkdir(world.mediaRoot);
  await mkdir(world.profilesDir);
  await writeFile(
    world.agentConfig,
    `version: 1\nmedia_roots: [${world.mediaRoot}]\nstate_dir: ${world.stateDir}\n${profiles ? `profiles_dirs: [${world.profilesDir}]\n` : ''}log_level: info\n`,
  );
  world.cleanup = () => rm(dir, { recursive: true, force: true });
  return world;
}

/** The command package.json's bin names: the one-file bundle's launcher, /usr/bin/mpprov in the .deb (npm run build). */
export const bundle = join(repoRoot, JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).bin.mpprov);

/** NODE_OPTIONS of systemd/mpprov.service: the agent is measured as the unit starts it. */
export async function unitNodeOptions() {
  const unit = await readFile(join(repoRoot, 'systemd/mpprov.service'), 'utf8');
  return /^Environment="?NODE_OPTIONS=([^"\n]*)"?$/m.exec(unit)?.[1] ?? '';
}

/** `mpprov run` as a child process, with the unit's NODE_OPTIONS; `entry` is the CLI file (default dist/cli/main.js). */
export async function startAgent(world, { entry = cli } = {}) {
  const outFile = join(world.dir, 'agent.out');
  const out = openSync(outFile, 'a');
  const env = { ...process.env, NO_COLOR: '1', NODE_OPTIONS: await unitNodeOptions() };
  const child = spawn(process.execPath, [entry, 'run', '--agent-config', world.agentConfig], {
    stdio: ['ignore', out, out],
    env,
  });
  closeSync(out);
  const output = () => readFile(outFile, 'utf8').catch(() => '');
  await waitFor(async () => (await output()).includes('watching media roots'), 15_000, 'the agent to start');
  return {
    child,
    output,
    stop: () =>
      new Promise((r) => {
        child.once('exit', r);
        child.kill('SIGTERM');
      }),
  };
}

export function requireFatTools() {
  if (!existsSync('/dev/fuse'))
    throw new Error('/dev/fuse is missing: the daemon benchmarks mount FAT images with fusefat');
}

export async function makeFatImage(image, label, files) {
  await writeFile(image, '');
  await run('truncate', ['-s', '8M', image]);
  await run(existsSync('/usr/sbin/mkfs.vfat') ? '/usr/sbin/mkfs.vfat' : 'mkfs.vfat', ['-n', label, image]);
  let n = 0;
  for (const [path, content] of Object.entries(files)) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++)
      await run('mmd', ['-D', 's', '-i', image, `::${parts.slice(0, i).join('/')}`], { env: mtoolsEnv }).catch(
        () => undefined,
      );
    const local = `${image}.f${n++}`;
    await writeFile(local, content);
    await run('mcopy', ['-i', image, local, `::${path}`], { env: mtoolsEnv });
    await rm(local);
  }
}

async function mounted(mountPoint) {
  const table = await readFile('/proc/self/mountinfo', 'utf8');
  return table.split('\n').some((line) => line.split(' ')[4] === mountPoint);
}

/** Mounts with fusefat; resolves with the time the mount appeared in the mount table. */
export async function mountFat(image, mountPoint, logFile) {
  await mkdir(mountPoint, { recursive: true });
  const out = openSync(logFile, 'a');
  const child = spawn('fusefat', ['-f', '-o', 'rw+', image, mountPoint], { stdio: ['ignore', out, out] });
  closeSync(out);
  const exited = new Promise((r) => child.once('exit', r));
  await waitFor(() => mounted(mountPoint), 10_000, 'fusefat to mount');
  const mountedAt = Date.now();
  return {
    mountedAt,
    unmount: async () => {
      await run('fusermount', ['-u', mountPoint]);
      await exited;
    },
  };
}

export function stickFiles(name, sim) {
  return {
    'mpprov.yaml': [
      'version: 1',
      'monitoring_points:',
      `  - name: ${name}`,
      `    url: ${sim.url}`,
      `    password_file: secrets/${name}.pw`,
      `    tls: { fingerprint_sha256: "${sim.fingerprintSha256}" }`,
      '    interfaces:',
      '      eth1:',
      '        ipv4: { method: static, address: 192.0.2.10/24, gateway: 192.0.2.1 }',
      '',
    ].join('\n'),
    [`secrets/${name}.pw`]: `${sim.password}\n`,
  };
}

export async function jobEnds(stateDir) {
  const text = await readFile(join(stateDir, 'jobs.jsonl'), 'utf8').catch(() => '');
  return text.split('\n').filter((l) => l.includes('"event":"end"')).length;
}

/** utime+stime of a process in seconds, its resident set in KiB and its voluntary context switches (wake-ups), from /proc. */
export async function processUsage(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const { stdout } = await run('getconf', ['CLK_TCK']);
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  const switches = Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? NaN);
  return { cpuSeconds: ticks / Number(stdout.trim()), rssKiB: kib('VmRSS'), hwmKiB: kib('VmHWM'), wakeups: switches };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
