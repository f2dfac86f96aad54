import { z } from 'zod';
import { request, type DeviceConnection } from './device-request.js';
import { encodeMultipart } from './multipart-body.js';
import { FILE_SLOTS, type FileSlot } from '../admin-api/vocabulary.js';
import { parseWire } from '../admin-api/wire-shape.js';

export interface UploadedFile {
  slot: FileSlot;
  filename: string;
  bytes: Uint8Array;
}

const UploadAnswer = z.looseObject({ files: z.record(z.string(), z.string()) });

/**
 * POST /interface/file/: one part per slot, part name = slot, so every file in one multipart
 * request unless two files share a slot (two interfaces with their own CA): the form has one part
 * of each name, and the device refuses a second, so such files go in one request after another.
 * The body is encoded up front into bytes with a Content-Length (multipart-body.ts), rather than
 * streamed chunked: the device wants a plain body and no `Expect` header, and undici never sends
 * `Expect: 100-continue`. Returns the stored name per slot (the last one, for a slot used twice).
 */
export async function uploadFiles(
  connection: DeviceConnection,
  files: readonly UploadedFile[],
): Promise<Partial<Record<FileSlot, string>>> {
  const out: Partial<Record<FileSlot, string>> = {};
  for (const batch of oneFilePerSlot(files)) Object.assign(out, await uploadBatch(connection, batch));
  return out;
}

/** The files in order, split into requests that hold each slot at most once. */
function oneFilePerSlot(files: readonly UploadedFile[]): UploadedFile[][] {
  const batches: UploadedFile[][] = [];
  for (const file of files) {
    const free = batches.find((batch) => batch.every((f) => f.slot !== file.slot));
    if (free === undefined) batches.push([file]);
    else free.push(file);
  }
  return batches;
}

async function uploadBatch(
  connection: DeviceConnection,
  files: readonly UploadedFile[],
): Promise<Partial<Record<FileSlot, string>>> {
  const { bytes, contentType } = encodeMultipart(
    files.map((file) => ({ name: file.slot, filename: file.filename, bytes: file.bytes })),
  );
  const answer = await request(connection, {
    method: 'POST',
    path: '/interface/file/',
    subject: files.map((f) => `${f.slot} ${f.filename}`).join(', '),
    body: { multipart: { bytes, contentType } },
  });
  return answer.read((json) => {
    const stored = parseWire(UploadAnswer, json).files;
    const out: Partial<Record<FileSlot, string>> = {};
    for (const slot of FILE_SLOTS) if (stored[slot] !== undefined) out[slot] = stored[slot];
    return out;
  });
}
