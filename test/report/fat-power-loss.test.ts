import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUsbLogWriter } from '../../src/report/index.js';
import { makeFatImage, type MountedStick, mountFat, readFatFile, requireFatTools } from '../daemon/fat-stick.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * Power lost while usb.log is written, as close as a test gets: the FUSE process behind a real FAT
 * image is killed with SIGKILL while a separate process appends job lines through the real writer
 * (a still-running trailer after each batch, as a job writes). Whatever fusefat had written to the
 * image by then is what a stick holds after the power went.
 *
 * FAT has no journal: killed while an append crosses into a new cluster, fusefat can leave the
 * file's size past its cluster chain. What must hold: usb.log is there (it is extended in place,
 * never replaced by a rename, so no usb.log.tmp either), every line the writer had reported written
 * is in it, in order, with nothing but at most one cut line after the last complete one (no NUL
 * bytes, no foreign text, no lost earlier lines); `fsck.fat -a` repairs what fusefat left; and the
 * next job's text starts on a line of its own. fat-kill-every-write.test.ts kills at every moment.
 */

const run = promisify(execFile);
const FSCK = '/usr/sbin/fsck.fat';
const writerScript = fileURLToPath(new URL('./power-loss-writer.mjs', import.meta.url));
const ROUNDS = 8;
const seed = Number(process.env.MPPROV_POWER_LOSS_SEED ?? Date.now() % 1_000_000);

let stick: MountedStick | undefined;
let writer: ChildProcess | undefined;
beforeAll(() => requireFatTools());
afterEach(async () => {
  writer?.kill('SIGKILL');
  writer = undefined;
  await stick?.pull();
  stick = undefined;
});

/** A small seeded generator: the kill moments differ per run and a failure names its seed. */
function seeded(start: number): () => number {
  let state = start >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

const expectedLine = (n: number): string => `line ${n} ${'x'.repeat(30 + ((n * 37) % 200))}`;

/**
 * What a cut log may look like: whole lines `line 0..m-1` in order, each trailer only as the last
 * whole line, then at most one cut line that is the start of what was being written.
 */
function checkLog(text: string, durable: number): string[] {
  const faults: string[] = [];
  if (text.includes('\0')) faults.push('NUL bytes in usb.log');
  const lines = text.split('\n');
  const cut = lines.pop() ?? '';
  let next = 0;
  for (const [index, line] of lines.entries()) {
    if (line === expectedLine(next)) next += 1;
    else if (/^still running after line \d+$/.test(line) && index === lines.length - 1) continue;
    else faults.push(`line ${index + 1} is not line ${next}: ${JSON.stringify(line.slice(0, 60))}`);
  }
  if (next < durable) faults.push(`only ${next} lines of the ${durable} reported written`);
  if (cut !== '' && !expectedLine(next).startsWith(cut) && !`still running after line ${next - 1}`.startsWith(cut)) {
    faults.push(`the cut last line is foreign: ${JSON.stringify(cut.slice(0, 60))}`);
  }
  return faults;
}

async function fsck(image: string, repair: boolean): Promise<{ status: number; said: string }> {
  try {
    const { stdout } = await run(FSCK, [repair ? '-a' : '-n', image], { encoding: 'utf8' });
    return { status: 0, said: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string };
    return { status: failed.code ?? -1, said: failed.stdout ?? '' };
  }
}

/** Starts the writer on the mounted stick; resolves each time it reports a line durable. */
function startWriter(root: string): { written: () => number; reached: (n: number) => Promise<void> } {
  let written = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  writer = spawn(process.execPath, [writerScript, root], { stdio: ['ignore', 'pipe', 'inherit'] });
  createInterface({ input: writer.stdout! }).on('line', (line) => {
    const match = /^written (\d+)$/.exec(line);
    if (match === null) return;
    written = Number(match[1]);
    for (const waiter of waiters.splice(0)) {
      if (written >= waiter.n) waiter.resolve();
      else waiters.push(waiter);
    }
  });
  return {
    written: () => written,
    reached: (n) => (written >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
  };
}

describe('power lost while usb.log is written on a FAT stick', () => {
  it(
    `the log keeps every line written, fsck repairs the rest, the next job starts a new line (${ROUNDS} kills, seed ${seed})`,
    { timeout: 300_000 },
    async () => {
      const random = seeded(seed);
      const repaired: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const dir = tempFolder('fat-power-loss');
        const image = join(dir, 'stick.img');
        await makeFatImage(image, 'POWERLOSS', { 'mpprov.yaml': 'version: 1\n' });
        stick = await mountFat(image, join(dir, 'mnt'), { logFile: join(dir, 'fuse.log') });
        const progress = startWriter(stick.mountPoint);
        // Past a few cluster boundaries (2 KiB clusters, ~150-byte lines) and at a random moment.
        await progress.reached(20 + Math.floor(random() * 150));
        await new Promise((resolve) => setTimeout(resolve, random() * 40));
        await stick.pull(); // SIGKILL to fusefat: the power goes
        const durable = progress.written();
        writer?.kill('SIGKILL');
        writer = undefined;
        stick = undefined;

        const context = `round ${round}, seed ${seed}, ${durable} lines reported written`;
        const cutLog = await readFatFile(image, 'usb.log');
        expect(cutLog, `${context}: usb.log is there`).toBeDefined();
        expect(await readFatFile(image, 'usb.log.tmp'), `${context}: no usb.log.tmp`).toBeUndefined();
        expect(checkLog(cutLog ?? '', durable), `${context}: usb.log`).toEqual([]);

        const before = await fsck(image, false);
        if (before.status !== 0) repaired.push(`round ${round}: ${before.said.split('\n').slice(1, 3).join(' ')}`);
        await fsck(image, true);
        expect(await fsck(image, false), `${context}: after fsck.fat -a`).toMatchObject({ status: 0 });
        const afterRepair = (await readFatFile(image, 'usb.log')) ?? '';
        expect(checkLog(afterRepair, durable), `${context}: after fsck.fat -a`).toEqual([]);

        // The next insertion: the agent's next job section starts on a line of its own.
        stick = await mountFat(image, join(dir, 'mnt'), { logFile: join(dir, 'fuse.log') });
        const log = createUsbLogWriter({ root: stick.mountPoint, device: (await stat(stick.mountPoint)).dev });
        log.append('======== mpprov job after the power came back\n');
        await log.flush();
        expect(log.status(), context).toEqual({ ok: true });
        await stick.unmount();
        stick = undefined;
        const next = (await readFatFile(image, 'usb.log')) ?? '';
        expect(next.startsWith(afterRepair), context).toBe(true);
        expect(next.split('\n').slice(-2), context).toEqual(['======== mpprov job after the power came back', '']);
      }
      // What fsck found before repairing, for the record (fusefat's metadata order, not mpprov's writes).
      if (repaired.length > 0) console.log(`fsck.fat repaired, seed ${seed}:\n${repaired.join('\n')}`);
    },
  );

  it('a stick left with only usb.log.tmp (an earlier version cut inside its rename): the next job copies it back and appends', async () => {
    const dir = tempFolder('fat-power-loss');
    const image = join(dir, 'stick.img');
    const earlier = `${expectedLine(0)}\n${expectedLine(1)}\n`;
    await makeFatImage(image, 'RENAMECUT', { 'mpprov.yaml': 'version: 1\n', 'usb.log.tmp': earlier });
    stick = await mountFat(image, join(dir, 'mnt'), { logFile: join(dir, 'fuse.log') });
    let restored = 0;
    const log = createUsbLogWriter({
      root: stick.mountPoint,
      device: (await stat(stick.mountPoint)).dev,
      onRestored: () => (restored += 1),
    });
    log.append('======== mpprov job\n');
    await log.flush();
    log.append('second line\n');
    await log.flush();
    expect(log.status()).toEqual({ ok: true });
    await stick.unmount();
    stick = undefined;
    expect(restored).toBe(1);
    expect(await readFatFile(image, 'usb.log')).toBe(`${earlier}======== mpprov job\nsecond line\n`);
    expect(await readFatFile(image, 'usb.log.tmp')).toBeUndefined();
  });

  it('a log that ends mid-line gets the next text on a line of its own', async () => {
    const dir = tempFolder('fat-power-loss');
    const image = join(dir, 'stick.img');
    await makeFatImage(image, 'CUTLOG', {
      'mpprov.yaml': 'version: 1\n',
      'usb.log': `${expectedLine(0)}\n${expectedLine(1).slice(0, 17)}`,
    });
    stick = await mountFat(image, join(dir, 'mnt'), { logFile: join(dir, 'fuse.log') });
    const log = createUsbLogWriter({ root: stick.mountPoint, device: (await stat(stick.mountPoint)).dev });
    log.append('======== mpprov job\n');
    log.append('second line\n');
    await log.flush();
    await stick.unmount();
    stick = undefined;
    expect(await readFatFile(image, 'usb.log')).toBe(
      `${expectedLine(0)}\n${expectedLine(1).slice(0, 17)}\n======== mpprov job\nsecond line\n`,
    );
  });
});
