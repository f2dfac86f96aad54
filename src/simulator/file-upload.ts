import { Response } from 'undici';
import type { DeviceConfig, StoredFile } from './device-config.js';
import { fileKindFor, slotTakes } from './file-kind.js';
import { MiB } from './http-exchange.js';
import { FILE_SLOTS, isFileSlot, type FileSlot } from './stanza.js';

/**
 * POST /interface/file/ (docs/device-model.md, "Requests"): multipart parts named after the six slots,
 * each a file of at most 1 MiB whose content (not name) must fit the slot (file-kind.ts). All
 * parts are checked before any is stored, so a refused upload changes nothing.
 */

const FILE_LIMIT = 1 * MiB;
/** Six full slots plus multipart overhead. */
export const UPLOAD_BODY_LIMIT = 6 * FILE_LIMIT + 64 * 1024;

const FILE_NAME = /^[A-Za-z0-9._-]{1,128}$/;

export type UploadOutcome =
  { ok: true; files: Partial<Record<FileSlot, string>> } | { ok: false; status: 400 | 413; error: string };

export async function handleUpload(config: DeviceConfig, body: Buffer, contentType: string): Promise<UploadOutcome> {
  const fail = (status: 400 | 413, error: string): UploadOutcome => ({ ok: false, status, error });
  if (!/^multipart\/form-data\s*;/i.test(contentType)) {
    return fail(400, `Request body must be multipart/form-data with file parts named ${FILE_SLOTS.join(', ')}.`);
  }
  let form: Awaited<ReturnType<Response['formData']>>;
  try {
    // undici's Response parses multipart bodies; Node 20's global one would too, but undici 7 is
    // the version this project pins.
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch {
    return fail(400, 'Request body is not valid multipart/form-data.');
  }
  const accepted = new Map<FileSlot, { name: string; file: StoredFile }>();
  for (const [part, value] of form.entries()) {
    if (!isFileSlot(part)) return fail(400, `Unknown part "${part}"; the parts are ${FILE_SLOTS.join(', ')}.`);
    if (accepted.has(part)) return fail(400, `Part "${part}" is given twice.`);
    if (typeof value === 'string') return fail(400, `Part "${part}" must be a file upload with a file name.`);
    // "." and ".." match the character set but are not file names.
    if (!FILE_NAME.test(value.name) || value.name === '.' || value.name === '..') {
      return fail(
        400,
        `Part "${part}" has file name "${value.name}"; a file name is 1 to 128 characters of A-Z, a-z, 0-9, ".", "_" and "-".`,
      );
    }
    if (value.size > FILE_LIMIT) return fail(413, `Part "${part}" is larger than 1 MiB.`);
    const content = Buffer.from(await value.arrayBuffer());
    const kind = fileKindFor(part, content);
    if (kind === undefined) return fail(400, `Part "${part}" must be ${slotTakes(part)}; "${value.name}" is not one.`);
    accepted.set(part, { name: value.name, file: { content, kind } });
  }
  if (accepted.size === 0) return fail(400, `Request has no file part; send one or more of ${FILE_SLOTS.join(', ')}.`);
  const files: Partial<Record<FileSlot, string>> = {};
  for (const [slot, { name, file }] of accepted) {
    config.storeFile(slot, name, file);
    files[slot] = name;
  }
  return { ok: true, files };
}
