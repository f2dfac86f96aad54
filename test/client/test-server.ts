import { X509Certificate } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createSelfSignedCertificate } from '../../src/simulator/index.js';

/**
 * A small HTTPS server on 127.0.0.1, port 0, answering with whatever a test scripts: to produce
 * the failure shapes a real device (or a broken one) can show. It records every request that
 * reached it, and every TLS handshake, so a test can assert that nothing was sent.
 */

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export type Handler = (req: IncomingMessage, body: Buffer, res: ServerResponse, index: number) => void | Promise<void>;

export interface TestServer {
  url: string;
  port: number;
  fingerprintSha256: string;
  certificatePem: string;
  requests: SeenRequest[];
  /** Cuts the TCP connection under `req` with a reset (RST), as a crashing device would. */
  reset(req: IncomingMessage): void;
  /** TCP connections accepted: a client that refuses the certificate still made one. */
  connections: number;
  close(): Promise<void>;
}

export interface TestServerOptions {
  cert?: { certPem: string; keyPem: string };
}

export async function startTestServer(handler: Handler, options: TestServerOptions = {}): Promise<TestServer> {
  const generated = options.cert === undefined ? createSelfSignedCertificate() : undefined;
  const certPem = options.cert?.certPem ?? generated?.certificatePem ?? '';
  const keyPem = options.cert?.keyPem ?? generated?.privateKeyPem ?? '';
  const sockets = new Set<Socket>();
  // The raw TCP sockets by client port: a TLSSocket cannot send a reset, its TCP socket can.
  const rawByPort = new Map<number, Socket>();
  const requests: SeenRequest[] = [];
  const state = { connections: 0 };
  const server: Server = createServer({ cert: certPem, key: keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const index = requests.length;
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      void Promise.resolve(handler(req, body, res, index)).catch(() => res.destroy());
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    state.connections += 1;
    if (socket.remotePort !== undefined) rawByPort.set(socket.remotePort, socket);
    socket.on('close', () => {
      sockets.delete(socket);
      if (socket.remotePort !== undefined) rawByPort.delete(socket.remotePort);
    });
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    fingerprintSha256: new X509Certificate(certPem).fingerprint256,
    certificatePem: certPem,
    requests,
    reset: (req) => {
      const raw = req.socket.remotePort === undefined ? undefined : rawByPort.get(req.socket.remotePort);
      if (raw === undefined) throw new Error('no TCP socket for this request');
      raw.resetAndDestroy();
    },
    get connections() {
      return state.connections;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers JSON with a status and optional headers. */
export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}
