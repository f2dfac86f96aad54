import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { SecureVersion } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSelfSignedCertificate } from '../self-signed-certificate.js';
import { ApplianceRegistry } from './appliance-registry.js';
import { CallerRateLimit, SIM_DATA_API_LIMIT, type CallerLimit } from './caller-rate-limit.js';
import { decide, type RequestKind, type WireAnswer } from './data-api-routes.js';
import type { DeliveryFault } from './delivery-faults.js';
import type { DeliveryLogEntry, DeliveryOutcome } from './delivery-log.js';
import { createEventFeed } from './event-feed.js';
import { ObserverRegistry, type ObserverJson } from './observer-registry.js';
import { DEFAULT_PATH_DATA, type PathDataSettings } from './path-data.js';
import { pathJson, PathRegistry } from './path-registry.js';
import type { RequestBody } from './route-types.js';
import { ServiceCallers, type SimTokenSpec, type SimUserSpec } from './service-callers.js';
import { ServiceFaults, type ServiceFaultSpec } from './service-faults.js';
import { ServiceRequestLog, type ServiceLogEntry } from './service-request-log.js';
import type {
  ApplianceJson,
  ApplianceRegistration,
  OrganizationSpec,
  ServiceShapes,
  SimConnectionStatus,
} from './service-wire.js';

/**
 * The monitoring service's data API, simulated (docs/service-model.md): HTTPS on loopback, the
 * organizations, MPs and callers a test or rehearsal sets up, the documented errors, the rate
 * limit per caller, faults, MP statuses that follow the simulated devices' restarts, and network
 * paths whose data flows while their MP is AVAILABLE.
 */

export interface ServiceSimulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Default `[{id: 12, name: "Branch Networks"}]` (`name` goes on the wire as `displayName`, or `name` in legacy shapes). */
  organizations?: readonly OrganizationSpec[];
  /** Default one token labelled `default` that sees every organization (its value: `token`). */
  tokens?: readonly SimTokenSpec[];
  users?: readonly SimUserSpec[];
  appliances?: readonly ApplianceRegistration[];
  /** Per caller; default 50 requests per 10 s; false switches it off. */
  rateLimit?: CallerLimit | false;
  /** How long an MP stays UNAVAILABLE after its device answers again; default 5000 ms. */
  reconnectMs?: number;
  /** `vendor` (default): the vendor client's shapes; `legacy`: the earlier model's (`name`, `{status, message}`). */
  shapes?: ServiceShapes;
  /** Delay from "path exists and its MP is AVAILABLE" to its first data; default 3000 ms. */
  pathDataMs?: number;
  /** One data element per metric every this many ms, at least 1000; default 5000 ms. */
  pathSampleMs?: number;
  /** Default a self-issued certificate for 127.0.0.1, ::1 and localhost (then `caPem` is that certificate). */
  tls?: { certPem: string; keyPem: string; caPem?: string };
  /** TLS versions the server offers (tests of the client's TLS 1.2 minimum); default Node's. */
  tlsVersions?: { min?: SecureVersion; max?: SecureVersion; ciphers?: string };
  /** A CA whose certificates HTTPS event receivers may have, beside Node's default store. */
  eventsCaPem?: string;
  /** TEST-ONLY: how long a receiver has to answer an event; default (and the model's) 10 000 ms. */
  eventAnswerMs?: number;
}

export interface ServiceSimulator {
  /** The data API base, as agent.yaml's service.url: `https://127.0.0.1:PORT/api`. */
  readonly url: string;
  readonly port: number;
  /** PEM to trust for this service (service.tls.ca). */
  readonly caPem: string;
  /** The first token's value (the `default` token unless `tokens` was given). */
  readonly token: string;
  addToken(spec: SimTokenSpec): string;
  addUser(spec: SimUserSpec): void;
  /** Revokes a token by label or value: now, or once `afterRequests` more requests used it. */
  revokeToken(labelOrValue: string, options?: { afterRequests?: number }): void;
  registerAppliance(registration: ApplianceRegistration): ApplianceJson;
  unregisterAppliance(hostname: string): boolean;
  /** An administrator's change, e.g. BLOCKED. */
  setConnectionStatus(hostname: string, status: SimConnectionStatus): void;
  connectionStatus(hostname: string): SimConnectionStatus;
  appliances(): ApplianceJson[];
  /** The paths, as GET /v3/path lists them (every organization). */
  paths(): Record<string, unknown>[];
  /** Every caller's observer configurations, as GET /v3/observer lists them, oldest first. */
  observers(): ObserverJson[];
  readonly shapes: ServiceShapes;
  readonly pathData: Readonly<PathDataSettings>;
  /** Device events: a networking restart began / the device answers again / its management port failed 802.1X. */
  restartStarted(hostname: string): void;
  answeringAgain(hostname: string): void;
  managementDot1xFailed(hostname: string): void;
  reconnectMs: number;
  /** Event delivery faults (`drop`, `delay=MS`, `duplicate`, `reorder`, each `,times=N`), replacing any before. */
  setDeliveryFaults(specs: readonly (string | DeliveryFault)[]): void;
  clearDeliveryFaults(): void;
  deliveryFaults(): DeliveryFault[];
  /** Every event delivery (and event not sent) with its outcome, oldest first. */
  deliveries(): DeliveryLogEntry[];
  /** Deliveries per outcome since the last clearDeliveries. */
  deliveryCounts(): Partial<Record<DeliveryOutcome, number>>;
  clearDeliveries(): void;
  /** Resolves once every event published so far has its outcome (nothing queued, held or in flight). */
  eventsSettled(): Promise<void>;
  setFaults(spec: ServiceFaultSpec): void;
  clearFaults(): void;
  requests(): ServiceLogEntry[];
  /** Requests per kind (`appliance-list`, `path-create`, ...) since the last clearRequests. */
  requestCounts(): Partial<Record<RequestKind, number>>;
  clearRequests(): void;
  /** TLS handshakes completed and failed (a client that refused the certificate made a failed one). */
  handshakes(): { completed: number; failed: number };
  close(): Promise<void>;
}

const SIM_BASE_PATH = '/api';
const DEFAULT_ORGANIZATIONS: readonly OrganizationSpec[] = [{ id: 12, name: 'Branch Networks' }];
/** Path bodies are a few hundred bytes; anything past this is refused unread. */
const BODY_LIMIT = 64 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x20);

export async function startServiceSimulator(options: ServiceSimulatorOptions = {}): Promise<ServiceSimulator> {
  const callers = new ServiceCallers(options.organizations ?? DEFAULT_ORGANIZATIONS);
  const tokens = options.tokens ?? [{ label: 'default' }];
  const values = tokens.map((spec) => callers.addToken(spec));
  for (const user of options.users ?? []) callers.addUser(user);
  const registry = new ApplianceRegistry(options.reconnectMs ?? 5_000, () => callers.organizations[0]?.id ?? 1);
  const paths = new PathRegistry();
  const observers = new ObserverRegistry();
  const shapes = options.shapes ?? 'vendor';
  const pathData: PathDataSettings = {
    firstDataMs: options.pathDataMs ?? DEFAULT_PATH_DATA.firstDataMs,
    sampleMs: options.pathSampleMs ?? DEFAULT_PATH_DATA.sampleMs,
  };
  if (!Number.isInteger(pathData.firstDataMs) || pathData.firstDataMs < 0)
    throw new RangeError('pathDataMs must be a whole number of ms, 0 or more');
  if (!Number.isInteger(pathData.sampleMs) || pathData.sampleMs < 1000)
    throw new RangeError('pathSampleMs must be a whole number of ms, 1000 or more (element times are whole seconds)');
  const rateLimit =
    options.rateLimit === false ? undefined : new CallerRateLimit(options.rateLimit ?? SIM_DATA_API_LIMIT);
  const faults = new ServiceFaults();
  const log = new ServiceRequestLog();
  const handshakes = { completed: 0, failed: 0 };

  const generated =
    options.tls === undefined
      ? createSelfSignedCertificate({ commonName: 'mpprov simulated monitoring service' })
      : undefined;
  const certPem = options.tls?.certPem ?? generated?.certificatePem ?? '';
  const keyPem = options.tls?.keyPem ?? generated?.privateKeyPem ?? '';
  const versions = options.tlsVersions ?? {};
  const server: Server = createServer(
    {
      cert: certPem,
      key: keyPem,
      ...(versions.min === undefined ? {} : { minVersion: versions.min }),
      ...(versions.max === undefined ? {} : { maxVersion: versions.max }),
      ...(versions.ciphers === undefined ? {} : { ciphers: versions.ciphers }),
    },
    (req, res) => void handle(req, res).catch(() => res.destroy()),
  );
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', () => (handshakes.completed += 1));
  server.on('tlsClientError', () => (handshakes.failed += 1));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A client that goes away mid-answer (one that caps a body, say) is not an error here.
    res.on('error', () => undefined);
    const body = await readBody(req);
    const atMs = Date.now();
    const decision = decide(
      {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        authorization: req.headers.authorization,
        accept: req.headers.accept,
        remoteAddress: req.socket.remoteAddress ?? '?',
        body,
      },
      { basePath: SIM_BASE_PATH, callers, registry, paths, observers, pathData, faults, rateLimit, shapes, now: atMs },
    );
    const latency = faults.latencyMs;
    const fault = [decision.fault, latency > 0 ? `latency ${latency} ms` : undefined]
      .filter((f) => f !== undefined)
      .join(', ');
    const retryAfterS = decision.answer.kind === 'json' ? decision.answer.retryAfterS : undefined;
    log.add({
      atMs,
      method: req.method ?? '?',
      path: decision.path,
      query: decision.query,
      kind: decision.kind,
      caller: decision.caller,
      status: decision.answer.kind === 'oversized' ? 200 : decision.answer.status,
      ...(fault === '' ? {} : { fault }),
      ...(retryAfterS === undefined ? {} : { retryAfterS }),
    });
    if (latency > 0) await sleep(latency);
    // A body left unread would be taken for the next request on this connection: close it.
    if (body.kind === 'too-large') res.setHeader('connection', 'close');
    await write(res, decision.answer);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const feed = createEventFeed({
    registry,
    paths,
    observers,
    callers,
    origin: `https://${host}:${address.port}`,
    answerMs: options.eventAnswerMs,
    caPem: options.eventsCaPem,
  });
  const register = (registration: ApplianceRegistration): ApplianceJson => {
    const json = registry.register(registration);
    feed.status.registered(json.hostname);
    return json;
  };
  // Each change of an MP's status, then its events.
  const changing = (change: (hostname: string) => void) => (hostname: string) => {
    change(hostname);
    feed.status.changed(hostname);
  };
  for (const appliance of options.appliances ?? []) register(appliance);
  let closing: Promise<void> | undefined;

  return {
    url: `https://${host}:${address.port}${SIM_BASE_PATH}`,
    port: address.port,
    caPem: options.tls?.caPem ?? certPem,
    token: values[0] ?? '',
    addToken: (spec) => callers.addToken(spec),
    addUser: (spec) => callers.addUser(spec),
    revokeToken: (labelOrValue, revokeOptions) => callers.revokeToken(labelOrValue, revokeOptions?.afterRequests),
    registerAppliance: register,
    unregisterAppliance: (hostname) => {
      const id = registry.byHostname(hostname)?.id;
      if (id !== undefined) feed.status.removed(id, hostname);
      return registry.unregister(hostname);
    },
    setConnectionStatus: (hostname, status) => changing((h) => registry.setStatus(h, status))(hostname),
    connectionStatus: (hostname) => registry.status(hostname),
    appliances: () => registry.list(),
    paths: () => paths.list().map(pathJson),
    observers: () => observers.all(),
    shapes,
    pathData,
    restartStarted: changing((hostname) => registry.restartStarted(hostname)),
    answeringAgain: changing((hostname) => registry.answeringAgain(hostname)),
    managementDot1xFailed: changing((hostname) => registry.managementDot1xFailed(hostname)),
    get reconnectMs() {
      return registry.reconnectMs;
    },
    set reconnectMs(ms: number) {
      registry.reconnectMs = ms;
      feed.status.rescheduleAll();
    },
    setDeliveryFaults: (specs) => feed.faults.set(specs),
    clearDeliveryFaults: () => feed.faults.clear(),
    deliveryFaults: () => feed.faults.list(),
    deliveries: () => feed.log.list(),
    deliveryCounts: () => feed.log.counts(),
    clearDeliveries: () => feed.log.clear(),
    eventsSettled: () => feed.delivery.settled(),
    setFaults: (spec) => faults.set(spec),
    clearFaults: () => faults.clear(),
    requests: () => log.list(),
    requestCounts: () => log.counts(),
    clearRequests: () => log.clear(),
    handshakes: () => ({ ...handshakes }),
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        feed.close();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      })),
  };
}

/** The body, up to BODY_LIMIT; beyond it, only that it was too large (the rest is not read). */
function readBody(req: IncomingMessage): Promise<RequestBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_LIMIT) {
        chunks.push(chunk);
        return;
      }
      // Paused, not destroyed: the 400 still goes out, then the connection closes.
      req.off('data', onData);
      req.pause();
      resolve({ kind: 'too-large' });
    };
    req.on('data', onData);
    req.once('error', reject);
    req.once('end', () => {
      if (size === 0) resolve({ kind: 'none' });
      else
        resolve({
          kind: 'text',
          text: Buffer.concat(chunks).toString('utf8'),
          contentType: req.headers['content-type'],
        });
    });
  });
}

async function write(res: ServerResponse, answer: WireAnswer): Promise<void> {
  switch (answer.kind) {
    case 'json': {
      const body = JSON.stringify(answer.json);
      const headers: Record<string, string | number> = {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      };
      if (answer.retryAfterS !== undefined) headers['retry-after'] = answer.retryAfterS;
      res.writeHead(answer.status, headers).end(body);
      return;
    }
    case 'raw':
      res.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.text);
      return;
    case 'oversized':
      await streamOversized(res, answer.bytes);
  }
}

/** A JSON array that never seems to end: `[` and spaces, chunked, until `bytes` or the client leaves. */
async function streamOversized(res: ServerResponse, bytes: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json' });
  let sent = 0;
  if (!res.write('[')) await drained(res);
  sent += 1;
  while (sent < bytes - 1 && !res.destroyed) {
    const chunk = CHUNK.subarray(0, Math.min(CHUNK.length, bytes - 1 - sent));
    sent += chunk.length;
    if (!res.write(chunk)) await drained(res);
  }
  if (!res.destroyed) res.end(']');
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
