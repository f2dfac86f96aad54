import { execFileSync, spawnSync } from 'node:child_process';
import { linkSync, lstatSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  appendDurably,
  appendOverTail,
  replaceDurably,
  restoreInterruptedReplace,
} from '../../src/core/durable-write.js';
import { writeResultTxt } from '../../src/report/result-file.js';
import { createUsbLogWriter } from '../../src/report/usb-log-writer.js';
import { waitFor, waitForJobEnds } from '../daemon/agent-process.js';
import { useAgentRig } from '../daemon/agent-rig.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * A stick (ext4 or tmpfs: FAT has no links) that plants usb.log, mpprov-result.json or
 * MPPROV-*.TXT as a symbolic link to another file on the same stick. The device check alone would
 * let an append follow it (same filesystem); every write must refuse the link instead, leave the
 * linked file as it was, and the agent must say so in its journal.
 */

const mounts: string[] = [];
function unmountAll(): void {
  for (const dir of mounts.splice(0).reverse()) {
    if (spawnSync('mountpoint', ['-q', dir]).status === 0) execFileSync('umount', ['-l', dir]);
  }
}

function tmpfsStick(): string {
  const dir = join(tempFolder('link-stick'), 'stick');
  mkdirSync(dir);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir]);
  mounts.push(dir);
  return dir;
}

const ORIGINAL = 'version: 1\nmonitoring_points: []\n';

describe('writes to a stick never follow a symbolic link', () => {
  afterEach(unmountAll);
  it('appendDurably, appendOverTail and replaceDurably refuse a link with ELOOP and leave its target alone', async () => {
    const root = tmpfsStick();
    const target = join(root, 'mpprov.yaml');
    writeFileSync(target, ORIGINAL);
    const device = (await stat(root)).dev;
    for (const name of ['usb.log', 'mpprov-result.json', 'MPPROV-OK.TXT']) symlinkSync('mpprov.yaml', join(root, name));

    await expect(appendDurably(join(root, 'usb.log'), 'x\n', { device })).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(appendOverTail(join(root, 'usb.log'), 'tail\n', 'x\n', { device })).rejects.toMatchObject({
      code: 'ELOOP',
    });
    await expect(replaceDurably(join(root, 'mpprov-result.json'), '{}\n', { device })).rejects.toMatchObject({
      code: 'ELOOP',
    });
    await expect(writeResultTxt(root, 'MPPROV-OK.TXT', 'ok\r\n', { device })).rejects.toMatchObject({ code: 'ELOOP' });

    expect(readFileSync(target, 'utf8')).toBe(ORIGINAL);
    for (const name of ['usb.log', 'mpprov-result.json', 'MPPROV-OK.TXT'])
      expect(readlinkSync(join(root, name))).toBe('mpprov.yaml');
  });

  it('a link to a file outside the stick is refused the same way (not only by the device check)', async () => {
    const root = tmpfsStick();
    const outside = join(tempFolder('outside'), 'notes');
    writeFileSync(outside, 'laptop file\n');
    symlinkSync(outside, join(root, 'usb.log'));
    await expect(appendDurably(join(root, 'usb.log'), 'x\n')).rejects.toMatchObject({ code: 'ELOOP' });
    expect(readFileSync(outside, 'utf8')).toBe('laptop file\n');
  });

  it('a usb.log.tmp planted as a link is never put back as usb.log; a usb.log that exists keeps its .tmp beside it', async () => {
    const root = tmpfsStick();
    writeFileSync(join(root, 'mpprov.yaml'), ORIGINAL);
    const device = (await stat(root)).dev;
    symlinkSync('mpprov.yaml', join(root, 'usb.log.tmp'));
    expect(await restoreInterruptedReplace(join(root, 'usb.log'), { device })).toBe(false);
    expect(lstatSync(join(root, 'usb.log.tmp')).isSymbolicLink()).toBe(true);
    const writer = createUsbLogWriter({ root, device, onRestored: () => expect.unreachable('a link was put back') });
    writer.append('a line\n');
    await writer.flush();
    expect(readFileSync(join(root, 'usb.log'), 'utf8')).toBe('a line\n');
    expect(readFileSync(join(root, 'mpprov.yaml'), 'utf8')).toBe(ORIGINAL);

    const other = tmpfsStick();
    writeFileSync(join(other, 'usb.log'), 'the log\n');
    writeFileSync(join(other, 'usb.log.tmp'), 'the log\nhalf a rewri');
    expect(await restoreInterruptedReplace(join(other, 'usb.log'), { device: (await stat(other)).dev })).toBe(false);
    expect(readFileSync(join(other, 'usb.log'), 'utf8')).toBe('the log\n');
  });

  it(
    'a FIFO, a folder or a second name of another file where usb.log belongs: refused at once, nothing written into anything',
    { timeout: 20_000 },
    async () => {
      const root = tmpfsStick();
      writeFileSync(join(root, 'mpprov.yaml'), ORIGINAL);
      const device = (await stat(root)).dev;
      const plant: Record<string, () => void> = {
        // Opened for writing without a reader, a FIFO would hold the writer (and the mount) forever.
        fifo: () => execFileSync('mkfifo', [join(root, 'usb.log')]),
        folder: () => mkdirSync(join(root, 'usb.log')),
        'hard link': () => linkSync(join(root, 'mpprov.yaml'), join(root, 'usb.log')),
      };
      for (const [what, make] of Object.entries(plant)) {
        execFileSync('rm', ['-rf', join(root, 'usb.log')]);
        make();
        const problems: string[] = [];
        const writer = createUsbLogWriter({ root, device, onProblem: (s) => problems.push(s.problem) });
        writer.setTrailer('still running\n');
        writer.append('a line\n');
        await writer.flush();
        expect(problems, what).toEqual(['not-plain']);
        expect(readFileSync(join(root, 'mpprov.yaml'), 'utf8'), what).toBe(ORIGINAL);
        await expect(appendDurably(join(root, 'usb.log'), 'x\n', { device }), what).rejects.toMatchObject({
          code: expect.stringMatching(/^(ENOTPLAIN|ENXIO)$/) as string,
        });
      }
      // A usb.log.tmp that is a second name of mpprov.yaml is never put back as usb.log.
      execFileSync('rm', ['-rf', join(root, 'usb.log')]);
      linkSync(join(root, 'mpprov.yaml'), join(root, 'usb.log.tmp'));
      expect(await restoreInterruptedReplace(join(root, 'usb.log'), { device })).toBe(false);
      const writer = createUsbLogWriter({ root, device });
      writer.append('a line\n');
      await writer.flush();
      expect(readFileSync(join(root, 'usb.log'), 'utf8')).toBe('a line\n');
      expect(readFileSync(join(root, 'mpprov.yaml'), 'utf8')).toBe(ORIGINAL);
    },
  );

  it('a planted mpprov-result.json.tmp (link, FIFO, folder, second name) is refused, named and left; a plain one is a cut replace, removed', async () => {
    const root = tmpfsStick();
    const config = join(root, 'mpprov.yaml');
    writeFileSync(config, ORIGINAL);
    const device = (await stat(root)).dev;
    const result = join(root, 'mpprov-result.json');
    const tmp = `${result}.tmp`;
    const plant: Record<string, { make: () => void; code: string; kept: () => boolean }> = {
      link: { make: () => symlinkSync('mpprov.yaml', tmp), code: 'ELOOP', kept: () => lstatSync(tmp).isSymbolicLink() },
      fifo: { make: () => execFileSync('mkfifo', [tmp]), code: 'ENOTPLAIN', kept: () => lstatSync(tmp).isFIFO() },
      folder: { make: () => mkdirSync(tmp), code: 'ENOTPLAIN', kept: () => lstatSync(tmp).isDirectory() },
      'hard link': { make: () => linkSync(config, tmp), code: 'ENOTPLAIN', kept: () => lstatSync(config).nlink === 2 },
    };
    expect(Object.keys(plant)).toHaveLength(4);
    for (const [what, { make, code, kept }] of Object.entries(plant)) {
      execFileSync('rm', ['-rf', tmp]);
      make();
      await expect(replaceDurably(result, '{}\n', { device }), what).rejects.toMatchObject({ code, path: tmp });
      expect(kept(), what).toBe(true);
      expect(lstatSync(result, { throwIfNoEntry: false }), what).toBeUndefined();
      expect(readFileSync(config, 'utf8'), what).toBe(ORIGINAL);
    }
    execFileSync('rm', ['-rf', tmp]);
    writeFileSync(tmp, '{"cut sh');
    await replaceDurably(result, '{}\n', { device });
    expect(readFileSync(result, 'utf8')).toBe('{}\n');
    expect(lstatSync(tmp, { throwIfNoEntry: false })).toBeUndefined();
  });

  it('a usb.log of another filesystem mounted on the stick is refused as not plain, and that file is left alone', async () => {
    const root = tmpfsStick();
    const device = (await stat(root)).dev;
    const outside = join(tempFolder('outside'), 'notes');
    writeFileSync(outside, 'laptop file\n');
    writeFileSync(join(root, 'usb.log'), '');
    execFileSync('mount', ['--bind', outside, join(root, 'usb.log')]);
    mounts.push(join(root, 'usb.log'));
    const refused = { code: 'ENOTPLAIN', path: join(root, 'usb.log') };
    await expect(appendDurably(join(root, 'usb.log'), 'x\n', { device })).rejects.toMatchObject(refused);
    await expect(appendOverTail(join(root, 'usb.log'), 'tail\n', 'x\n', { device })).rejects.toMatchObject(refused);
    await expect(replaceDurably(join(root, 'usb.log'), 'x\n', { device })).rejects.toMatchObject(refused);
    const problems: string[] = [];
    const writer = createUsbLogWriter({ root, device, onProblem: (s) => problems.push(s.problem) });
    writer.append('a line\n');
    await writer.flush();
    expect(problems).toEqual(['not-plain']);
    expect(readFileSync(outside, 'utf8')).toBe('laptop file\n');
  });

  it('the usb.log writer stops at the link and reports it as a link, naming the file', async () => {
    const root = tmpfsStick();
    writeFileSync(join(root, 'mpprov.yaml'), ORIGINAL);
    symlinkSync('mpprov.yaml', join(root, 'usb.log'));
    const problems: string[] = [];
    const writer = createUsbLogWriter({
      root,
      device: (await stat(root)).dev,
      onProblem: (s) => problems.push(`${s.problem} ${s.detail}`),
    });
    writer.append('a line\n');
    writer.writeResult('{}\n');
    await writer.flush();
    expect(problems).toEqual(['link usb.log: ELOOP']);
    expect(readFileSync(join(root, 'mpprov.yaml'), 'utf8')).toBe(ORIGINAL);
    expect(lstatSync(join(root, 'usb.log')).isSymbolicLink()).toBe(true);
  });
});

describe('mpprov run with a tmpfs stick whose usb.log is a link', () => {
  const rig = useAgentRig({ fatSticks: false });
  // Registered after the rig's: after-hooks run last-registered first, so the mounts go before the world.
  afterEach(unmountAll);

  it('writes nothing through the link, and says so in the journal', { timeout: 60_000 }, async () => {
    const world = await rig.makeWorld();
    const agent = await rig.startAgent(world);
    const staging = join(world.dir, 'staging');
    mkdirSync(staging);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', staging]);
    mounts.push(staging);
    // Invalid on purpose: the job ends at validation and still writes usb.log and its result.
    writeFileSync(join(staging, 'mpprov.yaml'), ORIGINAL);
    writeFileSync(join(staging, 'notes.txt'), "the technician's notes\n");
    symlinkSync('notes.txt', join(staging, 'usb.log'));
    const mountPoint = join(world.mediaRoot, 'LINKED');
    mkdirSync(mountPoint);
    execFileSync('mount', ['--bind', staging, mountPoint]);
    mounts.push(mountPoint);

    await waitForJobEnds(world, 1, agent);
    await waitFor(
      async () => (await agent.output()).includes('symbolic link'),
      10_000,
      'the journal line about the link',
      () => agent.output(),
    );
    expect(readFileSync(join(staging, 'notes.txt'), 'utf8')).toBe("the technician's notes\n");
    expect(readFileSync(join(staging, 'mpprov.yaml'), 'utf8')).toBe(ORIGINAL);
    expect(lstatSync(join(staging, 'usb.log')).isSymbolicLink()).toBe(true);
    const journal = (await agent.output()).split('\n').filter((l) => l.includes('symbolic link'));
    expect(journal.length).toBeGreaterThan(0);
    expect(journal[0]).toContain(
      'usb.log: a file mpprov writes on the stick is a symbolic link, which mpprov never follows',
    );
    expect((await agent.stop()).code).toBe(0);
  });
});
