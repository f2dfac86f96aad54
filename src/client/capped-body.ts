import type { Readable } from 'node:stream';

/**
 * Reads a device's answer body with a size cap enforced while streaming: a device (or anything a
 * stick names posing as one) that streams gigabytes costs at most `limitBytes` of memory; the rest
 * is never read and the connection is dropped. Admin API answers are a few KiB; 4 MiB is ample.
 * (The data API client has the same guard in src/service/capped-body.ts; service sits after the
 * client in the layering, so neither may import the other's.)
 */

export const MAX_DEVICE_BODY_BYTES = 4 * 1024 * 1024;

/** The body was longer than the cap; request() turns it into a DeviceResponseError naming the device. */
export class DeviceBodyTooLarge extends Error {
  override readonly name = 'DeviceBodyTooLarge';

  constructor(readonly limitBytes: number) {
    super(`the body is longer than ${limitBytes} bytes`);
  }
}

export async function readCappedBody(
  body: Readable,
  limitBytes: number,
  contentLength: string | string[] | undefined,
): Promise<string> {
  // Destroying undici's body emits an abort error; unheard, it would be an uncaught exception.
  body.on('error', () => undefined);
  const declared = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
  if (Number.isFinite(declared) && declared > limitBytes) {
    body.destroy();
    throw new DeviceBodyTooLarge(limitBytes);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  // Leaving the loop by throw destroys the stream, which makes undici drop the connection.
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > limitBytes) throw new DeviceBodyTooLarge(limitBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
