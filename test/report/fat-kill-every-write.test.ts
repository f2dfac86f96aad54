import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createUsbLogWriter } from '../../src/report/index.js';
import { makeFatImage, mountFat, readFatFile, requireFatTools } from '../daemon/fat-stick.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * Power lost at every single moment of a job's usb.log writes on a real FAT image, not at random
 * ones: fusefat runs under strace, which kills it with SIGKILL on entering its Kth write to the
 * image (that write not done), for K = 1, 2, ... until a run goes through with no kill. Between
 * two of fusefat's writes is every state a stick can be left in, so each is looked at: usb.log
 * must be there and hold every line the writer had reported written, in order, with at most the
 * still-running line as its last line and one cut line (the start of what was being written)
 * after that. A rename over usb.log fails this: fusefat deletes the old entry, clears the
 * temporary one and only then writes the new one, and a kill before that last write left neither
 * usb.log nor usb.log.tmp (the power-loss CI run with seed 377289: 0 of 103 lines).
 */

const STRACE = '/usr/bin/strace';
beforeAll(() => {
  requireFatTools();
  if (!existsSync(STRACE)) throw new Error(`${STRACE} is missing: apt-get install -y strace (.ci/run installs it)`);
});

const line = (n: number): string => `line ${n} ${'x'.repeat(300 + ((n * 53) % 400))}`;
const trailerOf = (n: number): string => `still running after line ${n}`;
const RESULT = 'RESULT: OK';

/** A job's batches: lines 0..n-1 each with its still-running line, then the result replacing it. */
interface Job {
  earlier: string;
  lines: number;
  /** The earlier lines are on the stick only as usb.log.tmp (an earlier version cut inside its rename). */
  onlyTmp?: boolean;
}

/** What the stick says after the kill, against what the writer had reported written. */
function faults(text: string | undefined, job: Job, reported: number, resultReported: boolean): string[] {
  if (text === undefined) return ['usb.log is gone'];
  const found: string[] = [];
  if (!text.startsWith(job.earlier)) return ['the earlier job lines are not all there'];
  if (text.includes('\0')) found.push('NUL bytes');
  const lines = text.slice(job.earlier.length).split('\n');
  const cut = lines.pop() ?? '';
  let next = 0;
  let result = false;
  for (const [index, got] of lines.entries()) {
    const last = index === lines.length - 1;
    if (got === line(next)) next += 1;
    else if (got === RESULT && last && next === job.lines) result = true;
    else if (!(last && got === trailerOf(next - 1))) found.push(`line ${index + 1} is foreign: ${got.slice(0, 40)}`);
  }
  if (next < reported) found.push(`only ${next} of the ${reported} lines reported written`);
  if (resultReported && !result) found.push('the reported result line is missing');
  const candidates = [line(next), trailerOf(next - 1), RESULT];
  if (cut !== '' && !candidates.some((c) => c.startsWith(cut))) found.push(`a foreign cut line: ${cut.slice(0, 40)}`);
  return found;
}

/** One run: the job's writes with fusefat killed at its `kill`th image write; what the stick holds then. */
async function runKilledAt(job: Job, kill: number): Promise<{ faults: string[]; killed: boolean }> {
  const dir = tempFolder('fat-kill');
  const image = join(dir, 'stick.img');
  await makeFatImage(image, 'KILLED', {
    'mpprov.yaml': 'version: 1\n',
    [job.onlyTmp === true ? 'usb.log.tmp' : 'usb.log']: job.earlier,
  });
  const stick = await mountFat(image, join(dir, 'mnt'), { logFile: join(dir, 'fuse.log'), killAtImageWrite: kill });
  const writer = createUsbLogWriter({ root: stick.mountPoint, device: (await stat(stick.mountPoint)).dev });
  let reported = 0;
  let resultReported = false;
  for (let n = 0; n <= job.lines; n++) {
    if (n < job.lines) {
      writer.append(`${line(n)}\n`);
      writer.setTrailer(`${trailerOf(n)}\n`);
    } else {
      writer.setTrailer(undefined);
      writer.append(`${RESULT}\n`);
    }
    await writer.flush();
    if (!writer.status().ok) break;
    if (n < job.lines) reported = n + 1;
    else resultReported = true;
  }
  // fusefat writes its FAT once more when unmounted: a kill there is a moment like any other.
  await stick.unmount();
  const killed = stick.endedBy() !== 'status 0';
  const left = await readFatFile(image, 'usb.log');
  const tmp = await readFatFile(image, 'usb.log.tmp');
  // Cut while usb.log.tmp was copied back: it is still there whole, and nothing was reported yet.
  const copyCut = job.onlyTmp === true && tmp === job.earlier && reported === 0;
  const found = copyCut ? [] : faults(left, job, reported, resultReported);
  if (tmp !== undefined && !copyCut) found.push('a usb.log.tmp is left');
  if (!killed && !resultReported) found.push(`not killed, yet the writer failed: ${JSON.stringify(writer.status())}`);
  return { faults: found.map((f) => `killed at image write ${kill}: ${f}`), killed };
}

async function everyMoment(job: Job): Promise<{ faults: string[]; moments: number }> {
  const found: string[] = [];
  for (let kill = 1; kill < 400; kill++) {
    const run = await runKilledAt(job, kill);
    found.push(...run.faults);
    if (!run.killed) return { faults: found, moments: kill - 1 };
  }
  throw new Error('the job made more than 400 writes to the image');
}

describe('power lost at every write fusefat makes while a job writes usb.log', () => {
  it('a log inside its first cluster, growing past it: no moment loses a line', { timeout: 240_000 }, async () => {
    const result = await everyMoment({ earlier: 'an earlier job\n', lines: 4 });
    expect(result.moments).toBeGreaterThan(10);
    expect(result.faults).toEqual([]);
  });

  it('a log left only as usb.log.tmp: copied back, no moment loses it', { timeout: 240_000 }, async () => {
    const earlier = `${Array.from({ length: 12 }, (_, n) => `earlier ${n} ${'e'.repeat(200)}`).join('\n')}\n`;
    const result = await everyMoment({ earlier, lines: 1, onlyTmp: true });
    expect(result.moments).toBeGreaterThan(10);
    expect(result.faults).toEqual([]);
  });

  it(
    'a log whose lines end exactly on a cluster boundary (4 096 bytes): no moment loses a line',
    {
      timeout: 240_000,
    },
    async () => {
      // After line 0 the log, without its still-running line, ends exactly at 4 096 bytes.
      const earlier = `${'e'.repeat(4096 - line(0).length - 2)}\n`;
      const result = await everyMoment({ earlier, lines: 3 });
      expect(result.moments).toBeGreaterThan(10);
      expect(result.faults).toEqual([]);
    },
  );
});
