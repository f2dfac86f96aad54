import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { expect } from 'vitest';

/**
 * A real event receiver on loopback, port 0: HTTPS with the certificate it is given (else plain
 * HTTP), recording every request whole. `answer` decides each reply: a status, or `hang` (never
 * answers, until closed). No product code: these tests say what the simulated service sends.
 */

export interface ReceivedRequest {
  /** Epoch ms when the whole body had arrived. */
  atMs: number;
  method: string;
  path: string;
  contentType: string | undefined;
  text: string;
  json: unknown;
}

export type ReceiverAnswer = number | 'hang';

export interface EventReceiver {
  url: string;
  received: ReceivedRequest[];
  /** The parsed bodies, in arrival order. */
  events(): Record<string, unknown>[];
  answer: ReceiverAnswer;
  /** Resolves once `count` requests have arrived (fails after `ms`). */
  waitFor(count: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startEventReceiver(
  options: { tls?: { cert: string; key: string }; path?: string } = {},
): Promise<EventReceiver> {
  const received: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const receiver = { answer: 200 as ReceiverAnswer };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(text) as unknown;
      } catch {
        json = undefined;
      }
      received.push({
        atMs: Date.now(),
        method: req.method ?? '?',
        path: req.url ?? '?',
        contentType: req.headers['content-type'],
        text,
        json,
      });
      if (receiver.answer !== 'hang') res.writeHead(receiver.answer, { 'content-type': 'text/plain' }).end('ok');
    });
  };
  const server = options.tls === undefined ? createHttpServer(handle) : createHttpsServer({ ...options.tls }, handle);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const scheme = options.tls === undefined ? 'http' : 'https';
  return {
    url: `${scheme}://127.0.0.1:${port}${options.path ?? '/events/k7Qm2xV9'}`,
    received,
    events: () => received.map((r) => r.json as Record<string, unknown>),
    get answer() {
      return receiver.answer;
    },
    set answer(value: ReceiverAnswer) {
      receiver.answer = value;
    },
    waitFor: async (count, ms = 5_000) => {
      const until = Date.now() + ms;
      while (received.length < count && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(received.length, `requests the receiver got (waited for ${count})`).toBeGreaterThanOrEqual(count);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
