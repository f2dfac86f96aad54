import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { ErrorCode, MpprovError } from '../core/errors.js';
import { MAX_EVENT_BYTES, parseServiceEvent, type ServiceEvent } from './service-event.js';

/**
 * The HTTPS server the service posts events to. An accepted event is answered 204 before anything
 * is done with it: the service waits at most 10 s and blacklists after 10 unanswered events, so no
 * slow disk may stand between a request and its answer. Any other path is 404, a body that is not
 * a plausible event 400 (413 past the cap), a method other than POST 405.
 */

export interface ReceiverOptions {
  host: string;
  port: number;
  /** Absent only for a loopback listener (the config stage refuses clear text beyond loopback). */
  tls?: { certFile: string; keyFile: string } | undefined;
  /** The one path events are taken on, e.g. `/mpprov-events/3f2a...`. */
  path: string;
  /** `event` as mpprov reads it; `received` the object as it came, for events.jsonl. */
  onEvent: (event: ServiceEvent, received: Record<string, unknown>) => void;
  /** A refused request, for the log: status and a short reason (no body text). */
  onRefused?: ((status: number, reason: string) => void) | undefined;
}

export interface EventReceiver {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Sockets held at once. The service posts one event per connection, one at a time per
 * configuration; past this a flood of connections is dropped on accept instead of costing a file
 * descriptor and up to MAX_EVENT_BYTES of memory each.
 */
export const MAX_CONNECTIONS = 256;
/**
 * Sockets held at once per client address: the service's deliveries come from a few addresses, so
 * one host holding idle connections cannot take every slot and starve the service's events into a
 * blacklisting.
 */
export const MAX_CONNECTIONS_PER_ADDRESS = 32;

export async function startEventReceiver(options: ReceiverOptions): Promise<EventReceiver> {
  const handler = (req: IncomingMessage, res: ServerResponse): void => handle(req, res, options);
  // A client that never finishes its request (slowloris) would otherwise hold a socket for ever; the
  // deadlines are enforced every second (Node's default check, every 30 s, would let one live 40 s).
  const timeouts = { requestTimeout: 10_000, headersTimeout: 10_000, connectionsCheckingInterval: 1_000 };
  const server: Server =
    options.tls === undefined
      ? createHttpServer(timeouts, handler)
      : createHttpsServer(
          {
            ...timeouts,
            // Node's default lets a client that never sends its TLS hello hold a slot for 120 s.
            handshakeTimeout: 10_000,
            cert: await readFile(options.tls.certFile),
            key: await readFile(options.tls.keyFile),
          },
          handler,
        );
  server.maxConnections = MAX_CONNECTIONS;
  limitPerAddress(server, MAX_CONNECTIONS_PER_ADDRESS);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new MpprovError(
          ErrorCode.ObserveListen,
          `cannot listen on ${options.host}:${options.port} (${error.code ?? error.message})`,
          {
            cause: error,
          },
        ),
      ),
    );
    server.listen(options.port, options.host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function handle(req: IncomingMessage, res: ServerResponse, options: ReceiverOptions): void {
  const refuse = (status: number, reason: string): void => {
    options.onRefused?.(status, reason);
    res.writeHead(status, { connection: 'close' }).end();
    req.resume();
  };
  const pathname = (req.url ?? '').split('?')[0] ?? '';
  if (!samePath(pathname, options.path)) return refuse(404, 'not the events path');
  if (req.method !== 'POST') return refuse(405, `method ${req.method ?? '?'}`);
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  req.on('data', (chunk: Buffer) => {
    if (done) return;
    size += chunk.length;
    if (size > MAX_EVENT_BYTES) {
      done = true;
      refuse(413, `body over ${MAX_EVENT_BYTES} bytes`);
      return;
    }
    chunks.push(chunk);
  });
  req.on('error', () => undefined);
  req.on('end', () => {
    if (done) return;
    done = true;
    const parsed = parseServiceEvent(Buffer.concat(chunks));
    if (parsed === undefined) return refuse(400, 'not an event');
    res.writeHead(204).end();
    // After the answer has left: the handler's work (a disk write) never delays it.
    setImmediate(() => options.onEvent(parsed.event, parsed.received));
  });
}

/** Compared as digests in constant time: how long a 404 takes says nothing of how much of the segment was right. */
function samePath(given: string, expected: string): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function limitPerAddress(server: Server, max: number): void {
  const held = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '?';
    const count = (held.get(address) ?? 0) + 1;
    if (count > max) {
      socket.destroy();
      return;
    }
    held.set(address, count);
    socket.once('close', () => {
      const left = (held.get(address) ?? 1) - 1;
      if (left === 0) held.delete(address);
      else held.set(address, left);
    });
  });
}
