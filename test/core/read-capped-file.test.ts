import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCappedFile, readUpTo } from '../../src/core/read-capped-file.js';
import { readInside } from '../../src/ingest/read-inside.js';
import { tempFolder } from '../support/temp-folder.js';

const MIB = 1024 * 1024;

async function fileOf(bytes: number): Promise<string> {
  const file = join(tempFolder('capped'), 'file.bin');
  await writeFile(file, Buffer.alloc(bytes, 0x41));
  return file;
}

async function readWith(file: string, expectedSize: number, cap: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    return await readUpTo(handle, expectedSize, cap);
  } finally {
    await handle.close();
  }
}

describe('a capped read holds memory for the file, not for its cap', () => {
  // A stick's certificate is a few KiB under a 1 MiB cap: the bytes the agent keeps for the job
  // must not pin a 1 MiB buffer each (the agent's RSS grew by tens of MiB over its first jobs).
  it('a 2 KiB file under a 1 MiB cap comes back in a buffer of its own size', async () => {
    const file = await fileOf(2048);
    const bytes = await readWith(file, 2048, MIB);
    expect(bytes.length).toBe(2048);
    expect(bytes.buffer.byteLength).toBeLessThan(4096);
  });

  it('the same through readInside (stick files) and readCappedFile (key, status, signers)', async () => {
    const file = await fileOf(1500);
    const inside = await readInside(join(file, '..'), 'file.bin', { what: 'file', limit: MIB, limitText: '1 MiB' });
    if (!inside.ok) throw new Error(inside.message);
    expect(inside.bytes.length).toBe(1500);
    expect(inside.bytes.buffer.byteLength).toBeLessThan(4096);
    const capped = await readCappedFile(file, MIB);
    if (!capped.ok) throw new Error(capped.why);
    expect(capped.bytes.length).toBe(1500);
    expect(capped.bytes.buffer.byteLength).toBeLessThan(4096);
  });
});

describe('a file larger than its fstat size said (it grew while read)', () => {
  it('is read whole while under the cap', async () => {
    const file = await fileOf(50_000);
    const bytes = await readWith(file, 10, 100_000);
    expect(bytes.length).toBe(50_000);
    expect(bytes.every((b) => b === 0x41)).toBe(true);
  });

  it('is read one byte past the cap and no further, so the caller refuses it', async () => {
    const file = await fileOf(300_000);
    expect((await readWith(file, 10, 100_000)).length).toBe(100_001);
    expect((await readWith(file, 100_000, 100_000)).length).toBe(100_001);
  });

  it('an empty file under a zero cap reads as empty; one byte under it reads one byte past', async () => {
    expect((await readWith(await fileOf(0), 0, 0)).length).toBe(0);
    expect((await readWith(await fileOf(1), 0, 0)).length).toBe(1);
  });
});
