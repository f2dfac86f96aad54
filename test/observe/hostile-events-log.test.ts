import { execFileSync } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { followAvailableEvents, readEvents, readObserveStatus } from '../../src/observe/index.js';
import {
  appendEvent,
  createEventsLog,
  EVENTS_FILE,
  MAX_QUEUED,
  type LoggedEvent,
} from '../../src/observe/events-log.js';

/**
 * events.jsonl as a hostile host or a crash leaves it: a flood across the rotation, a line cut by a
 * killed writer, the file replaced by a symlink or a FIFO, a file far past the bound. The writer
 * never writes through a link or blocks; readers never hang.
 */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mpprov-events-log-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const entry = (i: number, status = 'AVAILABLE'): LoggedEvent => ({
  received: new Date(0).toISOString(),
  event: { type: 'SEQUENCER_EVENT', sequencerName: `mp-${i}`, sequencerStatus: status },
});

describe('events.jsonl under hostile conditions', () => {
  it('loses no event of a burst that crosses the rotation, and the files stay bounded', async () => {
    const log = createEventsLog(dir, 2_000);
    const results = await Promise.allSettled(
      Array.from({ length: 300 }, (_, i) => log.append(entry(i)) ?? Promise.reject(new Error('dropped'))),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const names = (await readEvents(dir)).map((e) => e.event.sequencerName);
    // The newest events are all there and in order: nothing between the two files was dropped.
    expect(names.length).toBeGreaterThan(10);
    const first = Number(names[0]?.slice(3));
    expect(names).toEqual(Array.from({ length: names.length }, (_, i) => `mp-${first + i}`));
    expect(names.at(-1)).toBe('mp-299');
    expect((await stat(join(dir, EVENTS_FILE))).size).toBeLessThan(2_200);
    expect((await stat(join(dir, `${EVENTS_FILE}.1`))).size).toBeLessThan(2_200);
  });

  it('holds at most MAX_QUEUED lines for the disk and drops the rest of a flood', async () => {
    const log = createEventsLog(dir);
    const queued = Array.from({ length: MAX_QUEUED + 25 }, (_, i) => log.append(entry(i)));
    expect(queued.filter((q) => q === undefined)).toHaveLength(25);
    expect(log.pending()).toBe(MAX_QUEUED);
    await Promise.all(queued.filter((q) => q !== undefined));
    expect(log.pending()).toBe(0);
    expect(await readEvents(dir)).toHaveLength(MAX_QUEUED);
    expect(log.append(entry(0))).toBeDefined();
  });

  it('keeps the next event after a line cut by a killed writer', async () => {
    await appendEvent(dir, entry(1));
    await appendFile(join(dir, EVENTS_FILE), '{"received":"2026-01-01T00:00:00.000Z","event":{"type":"SEQ');
    await appendEvent(dir, entry(2));
    expect((await readEvents(dir)).map((e) => e.event.sequencerName)).toEqual(['mp-1', 'mp-2']);
  });

  it('keeps the first line of the current file when the rotated one ends in a cut line', async () => {
    await writeFile(join(dir, `${EVENTS_FILE}.1`), `${JSON.stringify(entry(1))}\n{"received":"x","ev`);
    await writeFile(join(dir, EVENTS_FILE), `${JSON.stringify(entry(2))}\n`);
    expect((await readEvents(dir)).map((e) => e.event.sequencerName)).toEqual(['mp-1', 'mp-2']);
  });

  it('never writes through a symlink put in place of the file', async () => {
    const target = join(dir, 'elsewhere');
    await writeFile(target, 'precious\n');
    await symlink(target, join(dir, EVENTS_FILE));
    await expect(appendEvent(dir, entry(1))).rejects.toThrow();
    expect(await readFile(target, 'utf8')).toBe('precious\n');
    expect(await readEvents(dir)).toEqual([]);
  });

  it('neither the writer nor the readers hang on a FIFO put in place of the files', async () => {
    execFileSync('mkfifo', [join(dir, EVENTS_FILE), join(dir, 'observe-status.json')]);
    await expect(appendEvent(dir, entry(1))).rejects.toThrow(/not a regular file/);
    expect(await readEvents(dir)).toEqual([]);
    expect(await readObserveStatus(dir)).toBeUndefined();
    const seen: string[] = [];
    const stop = followAvailableEvents(dir, (names) => seen.push(...names), 20);
    await new Promise((r) => setTimeout(r, 200));
    stop();
    expect(seen).toEqual([]);
  });

  it('follows a file rotated and grown past the old offset between two looks from its start', async () => {
    const file = join(dir, EVENTS_FILE);
    await writeFile(file, `${JSON.stringify(entry(0, 'UNAVAILABLE'))}\n`.repeat(20));
    const seen: string[] = [];
    const stop = followAvailableEvents(dir, (names) => seen.push(...names), 20);
    try {
      await new Promise((r) => setTimeout(r, 100));
      // Rotated meanwhile: the new file starts with the event a wait needs, and is already longer.
      await writeFile(
        `${file}.new`,
        `${JSON.stringify(entry(1))}\n${`${JSON.stringify(entry(2, 'UNAVAILABLE'))}\n`.repeat(40)}`,
      );
      await rename(`${file}.new`, file);
      for (let i = 0; i < 100 && !seen.includes('mp-1'); i++) await new Promise((r) => setTimeout(r, 20));
      expect(seen).toEqual(['mp-1']);
    } finally {
      stop();
    }
  });
});
