import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { allFiles, waitForJobEnds } from '../daemon/agent-process.js';
import { useAgentRig } from '../daemon/agent-rig.js';

/**
 * The daemon with a hostile stick on a real tmpfs mount (FAT has no links): mpprov.yaml is a link
 * to a file outside the stick whose lines look like YAML keys. The job must refuse it without
 * reading it, and the marker must appear in no byte the agent wrote: usb.log, the result file,
 * the state folder, its own output.
 */

const MARKER = 'MARKER-shadow-line-51c9';

describe('mpprov run with a hostile tmpfs stick', () => {
  const rig = useAgentRig({ fatSticks: false });
  const mounts: string[] = [];
  afterEach(() => {
    // The agent releases a stick itself once its result is written (when_done.eject): only what is
    // still mounted is taken down here.
    for (const dir of mounts.splice(0).reverse()) {
      if (spawnSync('mountpoint', ['-q', dir]).status === 0) execFileSync('umount', ['-l', dir]);
    }
  });

  it(
    'mpprov.yaml linked out of the stick is refused, and not one of its lines lands anywhere',
    { timeout: 60_000 },
    async () => {
      const world = await rig.makeWorld();
      const agent = await rig.startAgent(world);
      const outside = join(world.dir, 'shadow');
      writeFileSync(outside, `root: ${MARKER}\nbin: ${MARKER}-2\n`);
      // Filled first on a mount of its own, then bound under the media root in one step: the agent
      // sees a complete stick arrive.
      const staging = join(world.dir, 'staging');
      mkdirSync(staging);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', staging]);
      mounts.push(staging);
      symlinkSync(outside, join(staging, 'mpprov.yaml'));
      const mountPoint = join(world.mediaRoot, 'HOSTILE');
      mkdirSync(mountPoint);
      execFileSync('mount', ['--bind', staging, mountPoint]);
      mounts.push(mountPoint);

      const [end] = await waitForJobEnds(world, 1, agent);
      expect(end?.result, await agent.output()).toBe('FAILED');
      const usbLog = readFileSync(join(staging, 'usb.log'), 'utf8');
      expect(usbLog).toContain('mpprov.yaml is a link that leads outside the stick: it was not read');
      const outputs = new Map<string, Buffer>([
        ['usb.log', Buffer.from(usbLog)],
        ['mpprov-result.json', readFileSync(join(staging, 'mpprov-result.json'))],
        ['agent output', Buffer.from(await agent.output())],
        ...(await allFiles(world.stateDir)),
      ]);
      expect(outputs.size).toBeGreaterThan(3);
      for (const [name, content] of outputs) expect(content.includes(MARKER), `the marker in ${name}`).toBe(false);
      expect((await agent.stop()).code).toBe(0);
    },
  );
});
