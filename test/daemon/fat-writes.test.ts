import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watch } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { snapshotStick } from '../../src/ingest/index.js';
import { appendDurably, classifyStickError, createUsbLogWriter, replaceDurably } from '../../src/report/index.js';
import { writeResultTxt } from '../../src/report/result-file.js';
import { makeFatImage, type MountedStick, mountFat, readFatFile, requireFatTools } from './fat-stick.js';

describe('writing usb.log to a real FAT stick (fusefat)', () => {
  let dir: string;
  let stick: MountedStick | undefined;
  beforeAll(() => requireFatTools());
  afterEach(async () => {
    await stick?.unmount().catch(() => undefined);
    stick = undefined;
    await rm(dir, { recursive: true, force: true });
  });
  const mount = async (files: Record<string, string>, readOnly = false): Promise<{ image: string; root: string }> => {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-fat-'));
    const image = join(dir, 'stick.img');
    await makeFatImage(image, 'TEST', files);
    const root = join(dir, 'mnt');
    stick = await mountFat(image, root, { readOnly, logFile: join(dir, 'fusefat.log') });
    return { image, root };
  };

  it('appends in place to a small file although fusefat refuses a write at its end (EPERM), never by a rename', async () => {
    const { image, root } = await mount({ 'usb.log': 'old line\n' });
    const methods: string[] = [];
    for (let i = 0; i < 40; i++)
      methods.push(await appendDurably(join(root, 'usb.log'), `line ${i} ${'x'.repeat(60)}\n`));
    await replaceDurably(join(root, 'mpprov-result.json'), '{"a":1}\n');
    await replaceDurably(join(root, 'mpprov-result.json'), '{"b":2}\n');
    await stick?.unmount();
    // Each write starts on the file's last byte: fusefat takes that inside the first cluster too.
    expect(methods).toEqual(Array.from({ length: 40 }, () => 'extended'));
    expect(await readFatFile(image, 'usb.log.tmp')).toBeUndefined();
    const expected = `old line\n${Array.from({ length: 40 }, (_, i) => `line ${i} ${'x'.repeat(60)}\n`).join('')}`;
    expect(await readFatFile(image, 'usb.log')).toBe(expected);
    expect(await readFatFile(image, 'mpprov-result.json')).toBe('{"b":2}\n');
  });

  it('a read-only stick fails with EROFS, which reads as read-only', async () => {
    const { root } = await mount({ 'mpprov.yaml': 'version: 1\n' }, true);
    const error = await appendDurably(join(root, 'usb.log'), 'x\n').catch((e: unknown) => e);
    expect((error as NodeJS.ErrnoException).code).toBe('EROFS');
    expect(classifyStickError(error)).toBe('read-only');
  });

  it('a pulled stick fails as removed, and nothing is written into the empty mount folder', async () => {
    const { root } = await mount({ 'mpprov.yaml': 'version: 1\n' });
    const device = (await stat(root)).dev;
    const problems: string[] = [];
    const writer = createUsbLogWriter({ root, device, onProblem: (s) => problems.push(s.problem) });
    writer.append('first\n');
    await writer.flush();
    await stick?.pull();
    writer.append('second\n');
    writer.writeResult('{}\n');
    await writer.flush();
    expect(problems).toEqual(['removed']);
    expect(writer.status()).toMatchObject({ ok: false, problem: 'removed' });
    expect(writer.unwritten()).toBe('second\n');
    expect(await readdir(root)).toEqual([]);
  });

  it('snapshots a stick: names as the configuration spells them, caps and links handled', async () => {
    // Only files the configuration mentions are read (deep.txt and deeper.txt included, to show the depth cap).
    const config =
      'version: 1\n# password_file: secrets/admin.pw and certs/ca.pem\nx: [secrets/admin.pw, certs/ca.pem, a/b/c/d/deep.txt, a/b/c/d/e/deeper.txt]\n';
    const { root } = await mount({
      'mpprov.yaml': config,
      'secrets/admin.pw': 'pw\n',
      'certs/ca.pem': 'PEM\n',
      'usb.log': 'not input\n',
      'a/b/c/d/deep.txt': 'depth 4\n',
      'a/b/c/d/e/deeper.txt': 'depth 5\n',
    });
    const copy = join(dir, 'copy');
    const snapshot = await snapshotStick(root, 'mpprov.yaml', copy);
    expect(snapshot.configSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(await readFile(join(copy, 'mpprov.yaml'), 'utf8')).toBe(config);
    // fusefat lists 8.3 names in upper case; the copy also has them as the configuration says.
    expect(await readFile(join(copy, 'secrets/admin.pw'), 'utf8')).toBe('pw\n');
    expect(await readFile(join(copy, 'certs/ca.pem'), 'utf8')).toBe('PEM\n');
    // As listed (SECRETS, CERTS) and as spelt (secrets, certs); usb.log is not input; TEST (the volume label) is not mentioned.
    expect([...new Set((await readdir(copy)).map((n) => n.toLowerCase()))].sort()).toEqual([
      'a',
      'certs',
      'mpprov.yaml',
      'secrets',
    ]);
    expect(await readFile(join(copy, 'a/b/c/d/deep.txt'), 'utf8')).toBe('depth 4\n');
    expect(snapshot.notes).toEqual([
      expect.stringMatching(/^folder a\/b\/c\/d\/e is deeper than 4 levels: not read$/i),
    ]);
  });
});

describe('on an ordinary folder', () => {
  let dir: string;
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('a write to a folder that is no longer the stick (pulled between check and open) creates nothing there, not even for a moment', async () => {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-off-'));
    const elsewhere = (await stat(dir)).dev + 1;
    // Every name that appears in the folder, however briefly: a file created and removed again
    // would make a stick mounted there meanwhile fail with "mountpoint is not empty".
    const appeared: string[] = [];
    const watcher = watch(dir, (_event, name) => appeared.push(String(name)));
    try {
      const append = await appendDurably(join(dir, 'usb.log'), 'x\n', { device: elsewhere }).catch((e: unknown) => e);
      const replace = await replaceDurably(join(dir, 'mpprov-result.json'), '{}', { device: elsewhere }).catch(
        (e: unknown) => e,
      );
      const txt = await writeResultTxt(dir, 'MPPROV-OK.TXT', 'ok\r\n', { device: elsewhere }).catch((e: unknown) => e);
      expect((append as NodeJS.ErrnoException).code).toBe('ENODEV');
      expect(classifyStickError(replace)).toBe('removed');
      expect(classifyStickError(txt)).toBe('removed');
      // A marker written last: once its event is in, every earlier one is too.
      await writeFile(join(dir, 'marker'), '');
      await vi.waitFor(() => expect(appeared).toContain('marker'));
      expect(appeared.filter((name) => name !== 'marker')).toEqual([]);
    } finally {
      watcher.close();
    }
  });

  it('keeps an oversized file as a same-size placeholder and never follows a link out', async () => {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-snap-'));
    const root = join(dir, 'stick');
    await mkdir(join(root, 'certs'), { recursive: true });
    await writeFile(join(dir, 'outside.pem'), 'SECRET OUTSIDE\n');
    await writeFile(
      join(root, 'mpprov.yaml'),
      'version: 1\nfiles: [certs/big.p12, certs/real.pem, certs/out.pem, certs/in.pem]\n',
    );
    await writeFile(join(root, 'certs', 'big.p12'), Buffer.alloc(1024 * 1024 + 1, 1));
    await writeFile(join(root, 'certs', 'real.pem'), 'PEM\n');
    await symlink(join(dir, 'outside.pem'), join(root, 'certs', 'out.pem'));
    await symlink('real.pem', join(root, 'certs', 'in.pem'));
    await writeFile(join(root, 'MPPROV-RESULT.JSON'), '{}');
    const copy = join(dir, 'copy');
    const snapshot = await snapshotStick(root, 'mpprov.yaml', copy);
    expect((await stat(join(copy, 'certs', 'big.p12'))).size).toBe(1024 * 1024 + 1);
    expect((await stat(join(copy, 'certs', 'big.p12'))).blocks).toBe(0);
    expect(await readFile(join(copy, 'certs', 'in.pem'), 'utf8')).toBe('PEM\n');
    expect((await readdir(join(copy, 'certs'))).sort()).toEqual(['big.p12', 'in.pem', 'real.pem']);
    expect(await readdir(copy)).not.toContain('MPPROV-RESULT.JSON');
    expect(snapshot.notes.sort()).toEqual([
      'certs/big.p12 is 1048577 bytes, over the 1 MiB limit: not read',
      'certs/out.pem is a link that leads outside the stick: not read',
    ]);
  });
});
