import { X509Certificate } from 'node:crypto';
import { Pool } from '../core/undici.js';
import { ErrorCode, MpprovError } from '../core/errors.js';
import { createConnector, MAX_BODY_BYTES, peerUrl } from '../http/index.js';
import {
  getAppliance,
  listAppliances,
  listOrganizations,
  type ApplianceQuery,
  type CallOptions,
} from './appliance-endpoints.js';
import type { Appliance, NetworkPath, Organization, PathData, PathStatus } from './data-api-model.js';
import {
  createPath,
  listPathData,
  listPaths,
  listPathStatuses,
  setTargetLocation,
  type NewPath,
  type PathDataQuery,
} from './path-endpoints.js';
import { deleteObservers, listObservers, postObserver, type NewObserver, type Observer } from './observer-endpoints.js';
import { RateLimiter, type RateLimit } from './rate-limiter.js';
import type { ServiceConnection, ServiceRetryInfo } from './service-request.js';
import type { ServiceTarget } from './service-settings.js';

/** The monitoring service's data API, as mpprov uses it. Passed in, never a singleton. */
export interface DataApi {
  /** The base URL as configured, without a trailing slash. */
  readonly url: string;
  /** The limiter every request of this client waits on; share it with another client of the same token. */
  readonly limiter: RateLimiter;
  /** GET /v3/organization: the organizations the credentials may see. */
  listOrganizations(options?: CallOptions): Promise<Organization[]>;
  /** GET /v3/appliance[?orgId=][&hostname=][&mac=]: an MP the service does not know is simply absent. */
  listAppliances(query?: ApplianceQuery, options?: CallOptions): Promise<Appliance[]>;
  /** GET /v3/appliance/{id}: 404 when unknown. */
  getAppliance(id: number, options?: CallOptions): Promise<Appliance>;
  /** GET /v3/path?orgId= */
  listPaths(orgId: number, options?: CallOptions): Promise<NetworkPath[]>;
  /** POST /v3/path: 201 with the record; 400 for a duplicate, an unknown MP or organization. */
  createPath(path: NewPath, options?: CallOptions): Promise<NetworkPath>;
  /** PUT /v3/path/{id}/targetLocation */
  setTargetLocation(id: number, targetLocation: string, options?: CallOptions): Promise<NetworkPath>;
  /** GET /v3/path/status?orgId= */
  listPathStatuses(orgId: number, options?: CallOptions): Promise<PathStatus[]>;
  /** GET /v3/path/data?orgId=&pathIds=&from= (at most 20 path-days: the caller splits). */
  listPathData(query: PathDataQuery, options?: CallOptions): Promise<PathData[]>;
  /** GET /v3/observer: the caller's event configurations. */
  listObservers(options?: CallOptions): Promise<Observer[]>;
  /** POST /v3/observer: 400 when a kind already goes to another of the caller's servers. */
  postObserver(observer: NewObserver, options?: CallOptions): Promise<Observer>;
  /** DELETE /v3/observer: removes EVERY configuration of the caller. */
  deleteObservers(options?: CallOptions): Promise<void>;
  /**
   * Ends the client: its last user is done, so a request still on the wire is one whose wait ran
   * out (a service trickling its answer); it is dropped rather than waited for up to its deadline.
   */
  close(): Promise<void>;
}

export interface DataApiClientOptions {
  /** Share one limiter between clients of the same token; default a new one with `rateLimit`. */
  limiter?: RateLimiter;
  /** Default 50 requests per 10 s (docs/service-model.md, "Transport"). */
  rateLimit?: RateLimit;
  /** TCP and TLS handshake, default 10 000 ms. */
  connectTimeoutMs?: number;
  /** One exchange, default 30 000 ms. */
  requestTimeoutMs?: number;
  /** Cap on an answer's body, enforced while streaming; default 4 MiB. */
  maxBodyBytes?: number;
  /** Attempts while the service answers 429; default 5. */
  rateLimitedAttempts?: number;
  /** Parallel connections; default 4 (the rate limit, not the connections, bounds a fleet). */
  connections?: number;
  onRetry?: (info: ServiceRetryInfo) => void;
}

const DEFAULTS = {
  connectTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  rateLimitedAttempts: 5,
  connections: 4,
} as const;

/**
 * One client per run and token: every device's post-check goes through it, so its limiter keeps
 * the whole run within the service's limit. Throws a ConfigInvalid MpprovError for an unusable
 * target (URL, CA).
 */
export function createDataApiClient(target: ServiceTarget, options: DataApiClientOptions = {}): DataApi {
  const { origin, basePath, url } = serviceBase(target.url);
  if (target.caPem !== undefined) checkCa(target.caPem, url);
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
  const dispatcher = new Pool(origin, {
    connect: createConnector({ kind: 'public', extraCaPem: target.caPem }, connectTimeoutMs),
    connections: options.connections ?? DEFAULTS.connections,
    pipelining: 1,
    headersTimeout: requestTimeoutMs,
    bodyTimeout: requestTimeoutMs,
  });
  const limiter = options.limiter ?? new RateLimiter(options.rateLimit);
  const connection: ServiceConnection = {
    url,
    basePath,
    dispatcher,
    credentials: target.credentials,
    limiter,
    connectTimeoutMs,
    requestTimeoutMs,
    maxBodyBytes: options.maxBodyBytes ?? MAX_BODY_BYTES,
    rateLimitedAttempts: options.rateLimitedAttempts ?? DEFAULTS.rateLimitedAttempts,
    onRetry: options.onRetry,
  };
  let closing: Promise<void> | undefined;
  return {
    url,
    limiter,
    listOrganizations: (callOptions) => listOrganizations(connection, callOptions),
    listAppliances: (query, callOptions) => listAppliances(connection, query, callOptions),
    getAppliance: (id, callOptions) => getAppliance(connection, id, callOptions),
    listPaths: (orgId, callOptions) => listPaths(connection, orgId, callOptions),
    createPath: (path, callOptions) => createPath(connection, path, callOptions),
    setTargetLocation: (id, location, callOptions) => setTargetLocation(connection, id, location, callOptions),
    listPathStatuses: (orgId, callOptions) => listPathStatuses(connection, orgId, callOptions),
    listPathData: (query, callOptions) => listPathData(connection, query, callOptions),
    listObservers: (callOptions) => listObservers(connection, callOptions),
    postObserver: (observer, callOptions) => postObserver(connection, observer, callOptions),
    deleteObservers: (callOptions) => deleteObservers(connection, callOptions),
    close: () => (closing ??= dispatcher.destroy()),
  };
}

const invalid = (message: string) => new MpprovError(ErrorCode.ConfigInvalid, message);

/** `https://host[:port]/path`: the origin, the path every endpoint goes under, and the URL said in messages. */
function serviceBase(text: string): { origin: string; basePath: string; url: string } {
  const parsed = peerUrl(text, 'service', 'https://host[:port]/api');
  // Said without the query: a URL with `?token=...` must not put the token into a message.
  if (parsed.search !== '' || parsed.hash !== '')
    throw invalid(`the service URL ${parsed.origin}${parsed.pathname} must not have a query or fragment`);
  const basePath = parsed.pathname.replace(/\/+$/, '');
  return { origin: parsed.origin, basePath, url: `${parsed.origin}${basePath}` };
}

function checkCa(caPem: string, url: string): void {
  try {
    new X509Certificate(caPem);
  } catch {
    throw invalid(`the CA configured for the service at ${url} (service.tls.ca) is not a PEM certificate`);
  }
}
