import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSelfSignedCertificate } from '../../src/simulator/index.js';

/**
 * A data API that lies: a real HTTPS server on loopback whose every answer the test writes, route
 * by route, so that one test can send what no honest service would (records of the wrong types,
 * deeply nested or endless bodies, answers that trickle). Requests are recorded as method and
 * path only, never a header's value.
 */

export interface HostileRequest {
  method: string;
  /** With the query, without the API's base: `/v3/appliance?hostname=mp1`. */
  path: string;
}

/** What to send: a status and a body, or the response to write by hand (a trickle, a stall). */
export type HostileAnswer = { status: number; body: string; headers?: Record<string, string> } | HandWritten;
export type HandWritten = (res: ServerResponse) => void;

export type HostileRoute = (request: HostileRequest, raw: IncomingMessage) => HostileAnswer;

export interface HostileService {
  url: string;
  caPem: string;
  requests(): HostileRequest[];
  /** Answers still being written (a trickle the client has not dropped). */
  open(): number;
  close(): Promise<void>;
}

const BASE = '/api';

/** `route` answers every request under /api; anything else is 404. */
export async function startHostileService(route: HostileRoute): Promise<HostileService> {
  const cert = createSelfSignedCertificate({ ipAddresses: ['127.0.0.1'] });
  const log: HostileRequest[] = [];
  let open = 0;
  const server: Server = createServer({ cert: cert.certificatePem, key: cert.privateKeyPem }, (req, res) => {
    req.resume();
    const url = req.url ?? '/';
    if (!url.startsWith(`${BASE}/`)) return void res.writeHead(404).end();
    const request = { method: req.method ?? '?', path: url.slice(BASE.length) };
    log.push(request);
    open += 1;
    res.on('close', () => (open -= 1));
    const answer = route(request, req);
    if (typeof answer === 'function') return answer(res);
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}${BASE}`,
    caPem: cert.certificatePem,
    requests: () => [...log],
    open: () => open,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** JSON answered with 200. */
export const json = (value: unknown): HostileAnswer => ({ status: 200, body: JSON.stringify(value) });

/** Headers at once, then one byte per `everyMs` of `text`, for as long as the connection lasts. */
export function trickle(text: string, everyMs = 1_000): HandWritten {
  return (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    let at = 0;
    const timer = setInterval(() => {
      if (res.destroyed || at >= text.length) return void clearInterval(timer);
      res.write(text.charAt(at));
      at += 1;
    }, everyMs);
    res.on('close', () => clearInterval(timer));
  };
}
