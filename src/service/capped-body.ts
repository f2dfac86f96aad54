import type { Readable } from 'node:stream';

/**
 * Reads an answer body with a size cap enforced while streaming: a service (or anything posing
 * as one) that sends gigabytes costs at most `limitBytes` of memory, and the rest is never read.
 */

export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The body was longer than the cap; request() turns it into a ServiceBodyTooLargeError. */
export class BodyTooLarge extends Error {
  override readonly name = 'BodyTooLarge';

  constructor(readonly limitBytes: number) {
    super(`the body is longer than ${limitBytes} bytes`);
  }
}

export async function readCappedText(
  body: Readable,
  limitBytes: number,
  contentLength: string | string[] | undefined,
): Promise<string> {
  // Destroying undici's body emits an abort error; unheard, it would be an uncaught exception
  // that ends the process. The loop below still sees every error through its iterator.
  body.on('error', () => undefined);
  const declared = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
  if (Number.isFinite(declared) && declared > limitBytes) {
    body.destroy();
    throw new BodyTooLarge(limitBytes);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  // Leaving the loop by throw destroys the stream, which makes undici drop the connection.
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > limitBytes) throw new BodyTooLarge(limitBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
