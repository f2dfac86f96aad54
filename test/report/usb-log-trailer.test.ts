import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ResultWord } from '../../src/report/job-log-format.js';
import { busyText, RESULT_TXT, resultText, resultTxtName } from '../../src/report/result-file.js';
import { createUsbLogWriter } from '../../src/report/usb-log-writer.js';
import { makeFatImage, mountFat, readFatFile, requireFatTools } from '../daemon/fat-stick.js';

/**
 * usb.log's still-running line and the MPPROV-*.TXT files, written through the real writer onto a
 * real FAT image (fusefat), and read back with mtools after unmounting.
 */

const TRAILER = 'the job is still running (test trailer)\n';

describe('the usb.log trailer and the result files on a FAT stick', () => {
  let cleanup: (() => Promise<void>)[] = [];
  beforeAll(() => requireFatTools());
  afterEach(async () => {
    for (const c of cleanup.reverse()) await c();
    cleanup = [];
  });

  const stickWith = async (
    files: Record<string, string>,
  ): Promise<{ image: string; root: string; unmount: () => Promise<void> }> => {
    const dir = await mkdtemp(join(tmpdir(), 'mpprov-trailer-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const image = join(dir, 's.img');
    await makeFatImage(image, 'TRAILER', files);
    const root = join(dir, 'm');
    const stick = await mountFat(image, root, { logFile: join(dir, 'fuse.log') });
    cleanup.push(() => stick.unmount());
    return { image, root, unmount: () => stick.unmount() };
  };

  it(
    'the trailer stays the last line through many batches, once, and the closing line replaces it',
    { timeout: 30_000 },
    async () => {
      const { image, root, unmount } = await stickWith({
        'mpprov.yaml': 'version: 1\n',
        'usb.log': 'an earlier job\n',
      });
      const writer = createUsbLogWriter({ root, device: (await stat(root)).dev });
      writer.setTrailer(TRAILER);
      for (let i = 0; i < 40; i++) {
        writer.append(`${`line ${i} `.padEnd(70, '.')}\n`);
        if (i % 4 === 0) await writer.flush();
        if (i === 20) {
          const mid = await readFile(join(root, 'usb.log'), 'utf8');
          expect(mid.endsWith(`line 20 ${'.'.repeat(62)}\n${TRAILER}`)).toBe(true);
        }
      }
      await writer.flush();
      const running = await readFile(join(root, 'usb.log'), 'utf8');
      expect(running.split(TRAILER)).toHaveLength(2);
      expect(running.endsWith(TRAILER)).toBe(true);
      writer.setTrailer(undefined);
      writer.append('RESULT: CHANGED\n');
      await writer.flush();
      expect(writer.status()).toEqual({ ok: true });
      await unmount();
      const done = (await readFatFile(image, 'usb.log')) ?? '';
      expect(done.startsWith('an earlier job\nline 0 ')).toBe(true);
      expect(done.endsWith(`line 39 ${'.'.repeat(62)}\nRESULT: CHANGED\n`)).toBe(true);
      expect(done).not.toContain(TRAILER);
      expect(done).not.toContain('\0');
      expect(done.split('\n').filter((l) => l.startsWith('line '))).toHaveLength(40);
    },
  );

  it(
    'BUSY first removes an older result; the final result replaces BUSY: exactly one file at a time',
    { timeout: 30_000 },
    async () => {
      const { image, root, unmount } = await stickWith({
        'mpprov.yaml': 'version: 1\n',
        'MPPROV-FAILED.TXT': 'old\r\n',
        'mpprov-ok.txt': 'old too\r\n',
      });
      const writer = createUsbLogWriter({ root, device: (await stat(root)).dev });
      const started = new Date(2026, 10, 23, 8, 5);
      writer.writeResultTxt(RESULT_TXT.busy, busyText(started, 'j1'));
      await writer.flush();
      const listed = (await readdir(root)).filter((n) => n.toUpperCase().startsWith('MPPROV-'));
      expect(listed).toEqual(['MPPROV-BUSY.TXT']);
      expect(await readFile(join(root, 'MPPROV-BUSY.TXT'), 'utf8')).toBe(
        'mpprov is working on this stick since 08:05; do not remove it. (job j1)\r\n',
      );
      const conclusion = { word: 'NO CHANGE', summary: 'mp1: already applied, no restart' } as const;
      writer.writeResultTxt(
        resultTxtName(conclusion.word),
        resultText({
          conclusion,
          jobId: 'j1',
          finished: new Date(2026, 10, 23, 8, 7),
          label: 'STICK',
          configName: 'mpprov.yaml',
        }),
      );
      await writer.flush();
      await unmount();
      expect(await readFatFile(image, 'MPPROV-BUSY.TXT')).toBeUndefined();
      expect(await readFatFile(image, 'MPPROV-FAILED.TXT')).toBeUndefined();
      expect(await readFatFile(image, 'MPPROV-OK.TXT')).toBeUndefined();
      expect(await readFatFile(image, 'MPPROV-NO-CHANGE.TXT')).toBe(
        'mpprov NO CHANGE at 08:07 (stick STICK, mpprov.yaml, job j1): mp1: already applied, no restart. Results written and synced.\r\nDetails: usb.log and mpprov-result.json on this stick.\r\n',
      );
    },
  );

  it('each RESULT word has its file', () => {
    const words: ResultWord[] = ['CHANGED', 'OK', 'NO CHANGE', 'FAILED'];
    expect(words.map((w) => resultTxtName(w))).toEqual([
      'MPPROV-OK.TXT',
      'MPPROV-OK.TXT',
      'MPPROV-NO-CHANGE.TXT',
      'MPPROV-FAILED.TXT',
    ]);
  });
});
