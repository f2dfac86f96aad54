import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { visibleLines, visibleValue } from '../core/visible-text.js';
import { PAGE_CSS, PAGE_HTML, PAGE_JS } from './page-assets.js';
import type { StatusSource } from './status-document.js';

/**
 * The read-only status page: one node:http server on loopback, no framework. Routes: GET / (the
 * page), /page.css, /page.js, /status.json, /events (server-sent events: the whole status at once
 * and on each change, a comment every 15 s) and /jobs/ID/log (that job's local log as text).
 * Guarded against the browser-side attacks a local page meets: a Host header that is not this
 * loopback address is refused (DNS rebinding), no CORS header is ever sent, and a strict
 * Content-Security-Policy with the script in its own file (no inline script at all). Labels,
 * names and sentences are the sticks' and devices' text: the page shows them with textContent
 * (never HTML) and the server sends them with their control characters escaped (visibleText), so a
 * newline, an escape sequence or a bidi control in a name is shown, not obeyed.
 */

export interface StatusPageOptions {
  host: string;
  port: number;
  source: StatusSource;
  /** The job's local log, or undefined when there is none; called only with an id that isJobId accepts. */
  readLog: (id: string) => Promise<string | undefined>;
  isJobId: (id: string) => boolean;
  /** The agent's redactor: every body passes it once more on its way out. */
  redact: (text: string) => string;
  heartbeatMs?: number;
  /**
   * The monitoring service's events for MPs of these names (the devices of the listed jobs), newest
   * last; absent without service.events. Their text is the service's: sent escaped, shown with textContent.
   */
  serviceEvents?: ((names: readonly string[]) => Promise<ServiceEventLine[]>) | undefined;
}

/** One event as the page lists it. */
export interface ServiceEventLine {
  received: string;
  mp: string;
  text: string;
}

export interface StatusPage {
  /** `http://127.0.0.1:PORT/` with the port bound. */
  readonly url: string;
  readonly port: number;
  /** How many browsers follow /events now (a closed one is gone at once). */
  eventClients(): number;
  close(): Promise<void>;
}

const HEARTBEAT_MS = 15_000;
/** A few browser tabs and `mpprov notify`: more open streams than this are a runaway script. */
export const MAX_EVENT_CLIENTS = 32;
/** Open connections at once: the event streams and page loads of a few browsers, with room. */
const MAX_CONNECTIONS = 64;
/** An event stream's unsent bytes before its client is dropped as not reading. */
const MAX_CLIENT_BACKLOG_BYTES = 1024 * 1024;

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'Cross-Origin-Resource-Policy': 'same-origin',
} as const;

const STATIC: Record<string, { type: string; body: string }> = {
  '/': { type: 'text/html; charset=utf-8', body: PAGE_HTML },
  '/page.css': { type: 'text/css; charset=utf-8', body: PAGE_CSS },
  '/page.js': { type: 'text/javascript; charset=utf-8', body: PAGE_JS },
};

/** Starts the page; resolves once it listens (rejects when the address cannot be bound). */
export async function startStatusPage(options: StatusPageOptions): Promise<StatusPage> {
  const clients = new Set<ServerResponse>();
  let allowedHosts = new Set<string>();
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;

  const send = (
    res: ServerResponse,
    status: number,
    type: string,
    body: string,
    extra: Record<string, string> = {},
  ): void => {
    res.writeHead(status, {
      ...SECURITY_HEADERS,
      'Content-Type': type,
      'Content-Length': String(Buffer.byteLength(body)),
      ...extra,
    });
    res.end(res.req.method === 'HEAD' ? undefined : body);
  };
  const statusJson = (): string => options.redact(JSON.stringify(visibleValue(options.source.snapshot())));

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!allowedHosts.has((req.headers.host ?? '').toLowerCase())) {
      send(
        res,
        403,
        'text/plain; charset=utf-8',
        'this page answers only as http://127.0.0.1 or http://localhost on its own port\n',
      );
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'text/plain; charset=utf-8', 'the status page is read-only: GET only\n', { Allow: 'GET, HEAD' });
      return;
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const asset = STATIC[path];
    if (asset !== undefined) return send(res, 200, asset.type, asset.body);
    // Browsers ask for it on their own: no icon, and no 404 in their console either.
    if (path === '/favicon.ico') {
      res.writeHead(204, SECURITY_HEADERS);
      res.end();
      return;
    }
    if (path === '/status.json') return send(res, 200, 'application/json; charset=utf-8', statusJson());
    if (path === '/events') return openEvents(req, res);
    if (path === '/service-events.json') {
      const names = [...new Set(options.source.snapshot().jobs.flatMap((j) => j.devices.map((d) => d.name)))];
      const lines = options.serviceEvents === undefined ? [] : await options.serviceEvents(names);
      return send(res, 200, 'application/json; charset=utf-8', options.redact(JSON.stringify(visibleValue(lines))));
    }
    const log = /^\/jobs\/([^/]+)\/log$/.exec(path);
    if (log !== null) {
      // Job ids are plain ASCII: no decoding, so a malformed escape is simply not an id.
      const id = log[1] ?? '';
      if (!options.isJobId(id)) return send(res, 400, 'text/plain; charset=utf-8', 'not a job id\n');
      const text = await options.readLog(id);
      if (text === undefined) return send(res, 404, 'text/plain; charset=utf-8', `no log for job ${id}\n`);
      return send(res, 200, 'text/plain; charset=utf-8', visibleLines(options.redact(text)));
    }
    send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  };

  const openEvents = (req: IncomingMessage, res: ServerResponse): void => {
    if (clients.size >= MAX_EVENT_CLIENTS) {
      send(
        res,
        503,
        'text/plain; charset=utf-8',
        `too many open event streams (${MAX_EVENT_CLIENTS}): close some tabs\n`,
        { 'Retry-After': '10' },
      );
      return;
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      Connection: 'keep-alive',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    // Tells EventSource to reconnect after 2 s when the agent restarts.
    res.write('retry: 2000\n\n');
    res.write(snapshotEvent());
    clients.add(res);
    res.on('close', () => clients.delete(res));
  };
  /**
   * A client that stops reading (a paused tab, a local user's idle socket) would make the agent
   * buffer every later snapshot: once its backlog passes the cap it is dropped (EventSource
   * reconnects and gets a fresh snapshot).
   */
  const writeEvent = (client: ServerResponse, event: string): void => {
    if (client.writableLength > MAX_CLIENT_BACKLOG_BYTES) {
      clients.delete(client);
      client.destroy();
      return;
    }
    client.write(event);
  };
  // A JSON text has no raw newline, so each snapshot is exactly one data: line.
  const snapshotEvent = (): string => `event: snapshot\ndata: ${statusJson()}\n\n`;

  // Changes come in bursts (a step ends, the next starts): one event per turn of the loop.
  let pending = false;
  const unsubscribe = options.source.subscribe(() => {
    if (pending || clients.size === 0) return;
    pending = true;
    setImmediate(() => {
      pending = false;
      const event = snapshotEvent();
      for (const client of clients) writeEvent(client, event);
    });
  });
  const heartbeat = setInterval(() => {
    for (const client of clients) writeEvent(client, ': heartbeat\n\n');
  }, heartbeatMs);
  heartbeat.unref();

  // Short header and request deadlines and a connection cap: idle half-open connections from any
  // local user must not pile up file descriptors in the root agent.
  const server: Server = createServer(
    { headersTimeout: 5_000, requestTimeout: 10_000, keepAliveTimeout: 2_000 },
    (req, res) => {
      handle(req, res).catch(() => {
        if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
        else res.destroy();
      });
    },
  );
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host, port: options.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostPart = options.host.includes(':') ? `[${options.host}]` : options.host;
  allowedHosts = new Set([`${hostPart}:${port}`, `localhost:${port}`, ...(port === 80 ? [hostPart, 'localhost'] : [])]);

  return {
    url: `http://${hostPart}:${port}/`,
    port,
    eventClients: () => clients.size,
    async close() {
      unsubscribe();
      clearInterval(heartbeat);
      for (const client of clients) client.end();
      clients.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
