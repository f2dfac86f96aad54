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
 * POST /interface/file/: every file in one multipart request, part name = slot. The body is
 * encoded up front into bytes with a Content-Length (multipart-body.ts), rather than streamed
 * chunked: the device wants a plain body and no `Expect` header, and undici never sends
 * `Expect: 100-continue`.
 */
export async function uploadFiles(
  connection: DeviceConnection,
  files: readonly UploadedFile[],
): Promise<Partial<Record<FileSlot, string>>> {
  if (files.length === 0) return {};
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
