import type { IncomingMessage, ServerResponse } from 'node:http';

/** Reading request bodies under a size cap, and writing the device's JSON answers. */

export const KiB = 1024;
export const MiB = 1024 * KiB;

export class BodyTooLarge extends Error {
  override readonly name = 'BodyTooLarge';
}

/**
 * Reads the whole body; rejects with BodyTooLarge past `limit` bytes. The rest of an oversized
 * body is drained, not left unread: closing a socket with unread data sends a reset, and the
 * client would lose the 413 the caller is about to send. Past DRAIN_LIMIT the socket is cut.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const tooLarge = (what: string) => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      let drained = 0;
      req.on('data', (chunk: Buffer) => {
        drained += chunk.length;
        if (drained > DRAIN_LIMIT) req.socket.destroy();
      });
      req.resume();
      reject(new BodyTooLarge(what));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge(`body over ${limit} bytes`);
      else chunks.push(chunk);
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on('error', reject);
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      tooLarge(`body of ${declared} bytes`);
      return;
    }
    req.on('data', onData);
    req.on('end', onEnd);
  });
}

const DRAIN_LIMIT = 64 * MiB;

export type JsonParse = { ok: true; value: unknown } | { ok: false };

/** An empty body parses as undefined, so `PUT ... -d ''` and a missing body look the same. */
export function parseJsonBody(body: Buffer): JsonParse {
  const text = body.toString('utf8').trim();
  if (text === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  onFlushed?: () => void,
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text, onFlushed);
}

const PADDING_CHUNK = Buffer.alloc(64 * KiB, 0x61);

/**
 * A 200 whose JSON body is `bytes` long, streamed without a Content-Length (chunked), so a client
 * learns its size only by reading it: the huge-body fault. Written as the socket drains, so the
 * simulator itself never holds more than one chunk; it stops when the client hangs up.
 */
export function sendEndlessJson(res: ServerResponse, bytes: number): void {
  const head = Buffer.from('{"success": true, "padding": "');
  const tail = Buffer.from('"}');
  res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
  let left = Math.max(0, bytes - head.length - tail.length);
  res.write(head);
  const pump = (): void => {
    while (left > 0 && !res.destroyed) {
      const chunk = left >= PADDING_CHUNK.length ? PADDING_CHUNK : PADDING_CHUNK.subarray(0, left);
      left -= chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end(tail);
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}
