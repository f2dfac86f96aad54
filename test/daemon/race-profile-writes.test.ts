import { createHash } from 'node:crypto';
import { mkdir, open, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { activeEth1 } from '../support/device-observations.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { readJobs, waitFor } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';

/**
 * A profile rewritten again and again while the agent watches the profiles folder: in pieces (the
 * file truncated, then written in three chunks 20 ms apart), whole in one write, or written beside
 * it and renamed into place, with pauses around the agent's settle time (300 ms), so that a new
 * version often starts just as the agent reads the last one. Cut after its first chunk, a version
 * is itself a valid profile with a /2 netmask: a job on a half-written file would send that to the
 * device. The agent must never crash, every job must have read a complete version (or refuse the
 * file as written again while it read it, sending nothing), the device must never get a /2, and
 * the last version must get its job.
 * A writer stalled longer than the settle time between two chunks (a starved machine) makes a
 * half-written file look finished to anyone: the half it left is then allowed, and said.
 */

const PROFILE = 'branch-12.yaml';
const VERSIONS = 80;
const SETTLE_MS = 300;

/** Version k: eth1 at 192.0.2.(10+k)/24, in three chunks; the first alone is a valid profile with a /2. */
function versionChunks(sim: SimulatorHandle, k: number): string[] {
  return [
    [
      'version: 1',
      'monitoring_points:',
      '  - name: mp1',
      `    url: ${sim.url}`,
      '    username: admin',
      '    password_file: secrets/mp1.pw',
      `    tls: { fingerprint_sha256: "${sim.fingerprintSha256}" }`,
      '    interfaces:',
      '      eth1:',
      '        ipv4:',
      '          method: static',
      `          address: 192.0.2.${10 + k}/2`,
    ].join('\n'),
    '4\n          gateway: 192.0.2.1\n',
    '        link: { mtu: 1500 }\n',
  ];
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A small seeded generator (mulberry32): the same writes for the same seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('mpprov run: the profiles folder written while it is read', () => {
  const rig = useAgentRig({ fatSticks: false });

  it(
    'no crash, no job on a half-written file, no garbage on the device, and the last version gets its job',
    { timeout: 240_000 },
    async () => {
      const seed = Number(process.env.MPPROV_RACE_SEED ?? Date.now() % 100_000);
      console.log(`race-profile-writes seed ${seed} (MPPROV_RACE_SEED=${seed} repeats these writes)`);
      const next = random(seed);
      // Dozens of restarts a minute: the device's limit on service actions (12 a minute) is not the subject here.
      const sim = await rig.simulator({ restartMs: 300, serviceRateLimit: false });
      const world = await rig.makeWorld({
        agentYaml: ({ mediaRoot, stateDir, profilesDir }) =>
          `version: 1\nmedia_roots: [${mediaRoot}]\nprofiles_dirs: [${profilesDir}]\nstate_dir: ${stateDir}\nlog_level: debug\ntimeouts: { request_s: 5, restart_s: 30 }\n`,
      });
      await mkdir(join(world.profilesDir, 'secrets'));
      await writeFile(join(world.profilesDir, 'secrets', 'mp1.pw'), `${sim.password}\n`);
      const agent = await rig.startAgent(world);
      let exited = false;
      void agent.exited.then(() => (exited = true));

      const file = join(world.profilesDir, PROFILE);
      const complete = new Map<string, number>();
      /** Halves left longer than the settle time by a stalled writer: finished files to anyone. */
      const stalledHalves = new Map<string, number>();
      const ways: string[] = [];
      for (let k = 0; k < VERSIONS; k++) {
        const chunks = versionChunks(sim, k);
        const text = chunks.join('');
        complete.set(sha256(text), k);
        const way =
          k === VERSIONS - 1
            ? 'rename'
            : ((['chunks', 'chunks', 'whole', 'rename'] as const)[Math.floor(next() * 4)] ?? 'whole');
        ways.push(way);
        if (way === 'chunks') {
          const handle = await open(file, 'w');
          let written = '';
          for (const [i, chunk] of chunks.entries()) {
            if (i > 0) {
              const before = Date.now();
              await sleep(20);
              if (Date.now() - before >= SETTLE_MS - 50) stalledHalves.set(sha256(written), k);
            }
            await handle.write(chunk);
            written += chunk;
          }
          await handle.close();
        } else if (way === 'whole') {
          await writeFile(file, text);
        } else {
          await writeFile(join(world.profilesDir, `.${PROFILE}.tmp`), text);
          await rename(join(world.profilesDir, `.${PROFILE}.tmp`), file);
        }
        // Mostly just past the settle time, when the agent reads this version (chokidar looks every
        // 100 ms): the next one then often starts under its read. Else soon: the two become one.
        const pause = next() < 2 / 3 ? SETTLE_MS - 20 + next() * 140 : next() * (SETTLE_MS - 50);
        await sleep(k === VERSIONS - 1 ? 0 : Math.floor(pause));
      }
      const final = versionChunks(sim, VERSIONS - 1).join('');

      // The last version's job ends, and nothing is left running.
      const headerSha = async (id: string): Promise<string> =>
        /^config: +\S+, sha256 ([0-9a-f]{64})$/m.exec(
          await readFile(join(world.stateDir, 'logs', `${id}.log`), 'utf8'),
        )?.[1] ?? '';
      let history = await readJobs(world.stateDir);
      await waitFor(
        async () => {
          history = await readJobs(world.stateDir);
          const ends = history.filter((r) => r.event === 'end');
          if (ends.length === 0 || ends.length !== history.filter((r) => r.event === 'start').length) return false;
          const last = ends.at(-1);
          return last !== undefined && (await headerSha(last.id)) === sha256(final);
        },
        120_000,
        'the last version to be applied and every job to end',
        agent.output,
        agent.exited,
      );
      expect(exited).toBe(false);
      const output = await agent.output();
      expect(output).not.toMatch(/internal error|Uncaught|TypeError/);
      expect(history.filter((r) => r.event === 'end').at(-1)?.result, output).toMatch(/^(CHANGED|NO CHANGE)$/);
      expect(activeEth1(sim)).toMatchObject({ address: `192.0.2.${10 + VERSIONS - 1}`, netmask: '255.255.255.0' });

      // Every job read a complete version, or refused the file it found half rewritten.
      const ends = history.filter((r) => r.event === 'end');
      expect(ends.length).toBeGreaterThan(1);
      const refused: string[] = [];
      for (const end of ends) {
        const log = await readFile(join(world.stateDir, 'logs', `${end.id}.log`), 'utf8');
        if (log.includes(`${PROFILE} was written again while this job read it; nothing was sent to any device`)) {
          refused.push(end.id);
          expect(log).not.toMatch(/\] \[mp1\] /);
          continue;
        }
        const read = await headerSha(end.id);
        const known = complete.has(read) || stalledHalves.has(read);
        expect(known, `job ${end.id} read a version that was never complete:\n${log}`).toBe(true);
        if (end.result === 'FAILED')
          expect(log, `job ${end.id} failed without a located problem`).toMatch(
            new RegExp(`problem: ${PROFILE}:\\d+:\\d+ `),
          );
      }

      // The device never got half a file: every address it was sent had a /24.
      const posted = sim.requests().filter((r) => r.method === 'POST' && r.path === '/api/v1/interface/');
      expect(posted.length).toBeGreaterThan(0);
      const netmasks = new Set(posted.map((r) => (r.body as { netmask?: string } | undefined)?.netmask));
      if (stalledHalves.size === 0) expect(netmasks).toEqual(new Set(['255.255.255.0']));
      console.log(
        `${VERSIONS} versions (${ways.filter((w) => w === 'chunks').length} in chunks, ${ways.filter((w) => w === 'whole').length} whole, ` +
          `${ways.filter((w) => w === 'rename').length} renamed): ${ends.length} jobs, ${refused.length} refused as written again while read, ` +
          `${output.split('was written again after its writes settled').length - 1} events dropped as written again since they settled, ` +
          `${posted.length} POSTs; writer stalls past the settle time: ${stalledHalves.size}`,
      );
      expect((await agent.stop()).code).toBe(0);
    },
  );
});
