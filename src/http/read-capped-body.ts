import type { Readable } from 'node:stream';

/**
 * Reads an answer body with a size cap enforced while streaming: a peer (or anything a stick or
 * agent.yaml names posing as one) that streams gigabytes costs at most `limitBytes` of memory; the
 * rest is never read and the connection is dropped. Answers are a few KiB; 4 MiB is ample.
 */

export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The body was longer than the cap; sendRequest turns it into a BodyTooLargeError naming the peer. */
export class BodyOverCap extends Error {
  override readonly name = 'BodyOverCap';

  constructor(readonly limitBytes: number) {
    super(`the body is longer than ${limitBytes} bytes`);
  }
}

export async function readCappedBody(
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
    throw new BodyOverCap(limitBytes);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  // Leaving the loop by throw destroys the stream, which makes undici drop the connection.
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > limitBytes) throw new BodyOverCap(limitBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
