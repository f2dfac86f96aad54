import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from '../../src/simulator/index.js';
import { waitForJobEnds } from '../daemon/agent-process.js';
import { useAgentRig } from '../daemon/agent-rig.js';
import { readFatFile, rootNames } from '../daemon/fat-stick.js';
import { runCli } from '../support/run-cli.js';
import { useSigningRig } from '../signature/signing-rig.js';
import { fixtureCopy } from './stick-build-rig.js';

/**
 * The whole road: a CSV inventory of a simulated fleet of 5, built into signed FAT images by the
 * built CLI, each image mounted through fusefat where the agent (signatures required) takes it
 * to RESULT CHANGED and mpprov-ok.txt. The bench does the same for 200.
 */
const keys = useSigningRig();
const SITES = 5;

describe('images from mpprov stick build, taken by the agent', () => {
  const rig = useAgentRig();
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet(SITES, { restartMs: 300 });
  });
  afterAll(async () => {
    await fleet.close();
  });

  it(
    `takes each of ${SITES} built images to RESULT CHANGED against the fleet simulator`,
    { timeout: 120_000 },
    async () => {
      const { dir, out } = fixtureCopy('built-images');
      const header = 'site,name,url,username,fingerprint_sha256,eth1_address,dot1x_identity,dns,ca';
      const rows = fleet.manifest.devices.map((device, i) => {
        writeFileSync(join(dir, 'secrets', `admin-site-${i + 1}`), `${device.password}\n`);
        writeFileSync(join(dir, 'secrets', `dot1x-mp-${i + 1}`), `Dot1x-Pw-${i + 1}\n`);
        return `site-${i + 1},mp-${i + 1},${device.url},${device.username},${device.fingerprint_sha256},10.9.${i}.10/24,mp-${i + 1},10.9.0.53,certs/fleet-ca.pem`;
      });
      writeFileSync(join(dir, 'fleet.csv'), `${header}\r\n${rows.join('\r\n')}\r\n`);
      // A CSV cell is text: the template makes the one name server a list.
      const template = readFileSync(join(dir, 'template.yaml'), 'utf8').replace(
        'nameservers: ${dns}',
        'nameservers: ["${dns}"]',
      );
      expect(template).toContain('["${dns}"]');
      writeFileSync(join(dir, 'template.yaml'), template);
      const built = out();
      const result = await runCli([
        'stick',
        'build',
        join(dir, 'fleet.csv'),
        '--template',
        join(dir, 'template.yaml'),
        '--out',
        built,
        '--secrets-dir',
        join(dir, 'secrets'),
        '--sign',
        keys.keys.team,
        '--valid-until',
        '2099-12-31',
        '--image',
      ]);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      const sticks = JSON.parse(readFileSync(join(built, 'sticks.json'), 'utf8')) as { site: string; image: string }[];
      expect(sticks.map((s) => s.image)).toEqual(fleet.manifest.devices.map((_, i) => `site-${i + 1}.img`));

      const world = await rig.makeWorld({
        agentYaml: ({ mediaRoot, stateDir }) =>
          `version: 1\nmedia_roots: [${mediaRoot}]\nstate_dir: ${stateDir}\nlog_level: debug\ntimeouts: { request_s: 5, restart_s: 30 }\n` +
          `signatures: { required: true, allowed_signers: ${keys.allowedSigners} }\n`,
      });
      const agent = await rig.startAgent(world);
      const mounted = [];
      for (const stick of sticks) {
        const image = join(built, stick.image);
        const label = stick.site.toUpperCase();
        mounted.push({
          image,
          stick: await rig.mount(image, join(world.mediaRoot, label), {
            logFile: join(world.dir, `fusefat-${stick.site}.log`),
          }),
        });
      }
      const ends = await waitForJobEnds(world, SITES, agent, 90_000);
      for (const { stick } of mounted) await stick.unmount();
      expect(
        ends.map((end) => end.result),
        await agent.output(),
      ).toEqual(Array<string>(SITES).fill('CHANGED'));
      for (const [i, { image }] of mounted.entries()) {
        const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
        expect(usbLog).toMatch(/signature: signed by team@example\.com .*; valid until 2099-12-31/);
        expect(usbLog).toMatch(new RegExp(`^RESULT: CHANGED +mp-${i + 1}: changed`, 'm'));
        expect(await rootNames(image)).toContain('MPPROV-OK.TXT');
        expect(usbLog).not.toContain(fleet.manifest.devices[i]?.password ?? '(none)');
        expect(usbLog).not.toContain(`Dot1x-Pw-${i + 1}`);
      }
      for (const [i, device] of fleet.devices.entries())
        expect(device.requests().length, `device ${i + 1}`).toBeGreaterThan(0);
    },
  );
});
