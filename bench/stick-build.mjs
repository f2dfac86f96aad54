// `mpprov stick build` of a 200-site fleet (one MP each): the whole process, signed with an SSH
// key, each stick also written as a FAT image (target: under 20 s, docs/performance.md). Then the
// agent, signatures required, takes every one of those images mounted through fusefat (20 at a
// time) against a simulated fleet of 200: the figure is how many end RESULT CHANGED (target: all).
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFleet } from '../dist/simulator/index.js';
import { jobEnds, makeWorld, mountFat, repoRoot, requireFatTools, startAgent, waitFor } from './daemon-lib.mjs';
import { judged, summarize } from './lib/stats.mjs';
import { timeProcess } from './lib/timed-process.mjs';

const FIXTURES = join(repoRoot, 'test/fixtures/stick-build');
/** Sticks in the agent's hands at once. */
const BATCH = 20;

export async function stickBuildBench({ sites = 200, runs, entry, workDir, log }) {
  requireFatTools();
  const fleet = await startFleet(sites, { restartMs: 300 });
  try {
    const dir = join(workDir, 'stick-build');
    await mkdir(join(dir, 'secrets'), { recursive: true });
    await mkdir(join(dir, 'certs'), { recursive: true });
    await copyFile(join(FIXTURES, 'certs/fleet-ca.pem'), join(dir, 'certs/fleet-ca.pem'));
    // A CSV cell is text: the one name server becomes a list in the template.
    const template = (await readFile(join(FIXTURES, 'template.yaml'), 'utf8')).replace(
      'nameservers: ${dns}',
      'nameservers: ["${dns}"]',
    );
    await writeFile(join(dir, 'template.yaml'), template);
    const rows = ['site,name,url,username,fingerprint_sha256,eth1_address,dot1x_identity,dns,ca'];
    for (const [i, device] of fleet.manifest.devices.entries()) {
      const site = `site-${String(i + 1).padStart(3, '0')}`;
      await writeFile(join(dir, 'secrets', `admin-${site}`), `${device.password}\n`);
      await writeFile(join(dir, 'secrets', `dot1x-mp-${site}`), `Dot1x-Bench-${i}\n`);
      rows.push(
        `${site},mp-${site},${device.url},${device.username},${device.fingerprint_sha256},10.${(i >> 8) + 10}.${i & 255}.10/24,mp-${site},10.9.0.53,certs/fleet-ca.pem`,
      );
    }
    await writeFile(join(dir, 'fleet.csv'), `${rows.join('\r\n')}\r\n`);
    const key = join(dir, 'signing-key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'bench@example.com', '-f', key]);
    const allowed = join(dir, 'allowed_signers');
    await writeFile(
      allowed,
      `bench@example.com ${(await readFile(`${key}.pub`, 'utf8')).split(' ').slice(0, 2).join(' ')}\n`,
    );

    const times = [];
    let out;
    for (let i = 0; i < runs; i++) {
      out = join(dir, `out-${i + 1}`);
      const run = await timeProcess(process.execPath, [
        entry,
        'stick',
        'build',
        join(dir, 'fleet.csv'),
        '--template',
        join(dir, 'template.yaml'),
        '--out',
        out,
        '--secrets-dir',
        join(dir, 'secrets'),
        '--sign',
        key,
        '--valid-until',
        '2099-12-31',
        '--image',
      ]);
      if (run.status !== 0) throw new Error(`stick build exited ${run.status}: ${run.stdout.slice(-500)}`);
      times.push(run.wallMs / 1000);
      log(`stick build r${i + 1}: ${sites} sites signed with images in ${(run.wallMs / 1000).toFixed(1)} s`);
    }
    const sticks = JSON.parse(await readFile(join(out, 'sticks.json'), 'utf8'));
    if (sticks.length !== sites) throw new Error(`stick build made ${sticks.length} sticks, not ${sites}`);

    const world = await makeWorld();
    await writeFile(
      world.agentConfig,
      `version: 1\nmedia_roots: [${world.mediaRoot}]\nstate_dir: ${world.stateDir}\nlog_level: info\n` +
        `timeouts: { request_s: 10, restart_s: 60 }\nsignatures: { required: true, allowed_signers: ${allowed} }\n`,
    );
    const agent = await startAgent(world, { entry });
    const started = Date.now();
    try {
      // In batches, as laptops take sticks: 200 jobs at once on 2 cores measure the machine, not mpprov.
      for (let from = 0; from < sticks.length; from += BATCH) {
        const batch = sticks.slice(from, from + BATCH);
        const mounts = [];
        try {
          for (const stick of batch)
            mounts.push(
              await mountFat(
                join(out, stick.image),
                join(world.mediaRoot, stick.site.toUpperCase()),
                join(world.dir, `fuse-${stick.site}.log`),
              ),
            );
          const expected = from + batch.length;
          await waitFor(
            async () => (await jobEnds(world.stateDir)) >= expected,
            300_000,
            `${expected} agent jobs to end`,
          );
        } finally {
          for (const mount of mounts) await mount.unmount().catch(() => undefined);
        }
      }
    } finally {
      await agent.stop();
    }
    const ends = (await readFile(join(world.stateDir, 'jobs.jsonl'), 'utf8'))
      .split('\n')
      .filter((line) => line.includes('"event":"end"'))
      .map((line) => JSON.parse(line));
    const ok = ends.filter((end) => end.result === 'CHANGED').length;
    // What the others said, counted by their first words: a miss is explained in the log.
    const said = new Map();
    for (const end of ends.filter((e) => e.result !== 'CHANGED')) {
      const text = `${end.result}: ${JSON.stringify(end).slice(0, 300)}`;
      said.set(text, (said.get(text) ?? 0) + 1);
    }
    for (const [text, n] of [...said].slice(0, 5)) log(`agent: ${n} x ${text}`);
    log(`agent: ${ok} of ${sites} built images RESULT CHANGED in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await world.cleanup();
    return {
      what: `mpprov stick build of ${sites} sites (one MP each), signed, with FAT images; then the agent on every image`,
      build_s: judged(summarize(times, 's'), '<', 20),
      agent_changed: judged(summarize([ok], 'count', 0), '==', sites),
    };
  } finally {
    await fleet.close();
  }
}
