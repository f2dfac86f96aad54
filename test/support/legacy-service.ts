import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSelfSignedCertificate } from '../../src/simulator/index.js';

/**
 * A data API that answers in the older model's shapes, for the client's tolerance: organizations
 * with `name` (no displayName), appliance records with `hostname` and `orgId`, errors as
 * `{"status", "message"}` (or, per test, the vendor's `{"httpStatusCode", "messages"}`, text that
 * is not JSON, or no body), no `orgId=` query and no `/v3/appliance/{id}` (both 400 and 404, as
 * that model had them), no paths at all (404). A real HTTPS server on loopback; every request is
 * recorded with its Authorization header's presence only, never its value.
 */

export interface LegacyAppliance {
  id: number;
  name: string;
  hostname: string;
  orgId: number;
  connectionStatus: string;
  /** Fields a service may add: sent as they are. */
  extra?: Record<string, unknown>;
}

export type ErrorShape = 'model' | 'vendor' | 'text' | 'empty';

export interface LegacyServiceOptions {
  token: string;
  organizations?: { id: number; name: string }[];
  appliances?: LegacyAppliance[];
  /** Answer 400 to `?hostname=` (a service that does not search by hostname). */
  refuseHostname?: boolean;
  errorShape?: ErrorShape;
}

export interface LegacyRequest {
  method: string;
  path: string;
  status: number;
}

export interface LegacyService {
  url: string;
  caPem: string;
  appliances: LegacyAppliance[];
  /** The next `count` requests get this error (after authentication), then answers resume. */
  failNext(count: number, status: number, message: string): void;
  requests(): LegacyRequest[];
  close(): Promise<void>;
}

const MESSAGES = {
  400: 'Bad Request',
  404: 'Not found',
  noCredentials: 'Full authentication is required to access this resource',
  badCredentials: 'Bad credentials',
  undecodable: 'Failed to decode basic authentication token',
} as const;

export async function startLegacyService(options: LegacyServiceOptions): Promise<LegacyService> {
  const cert = createSelfSignedCertificate({ ipAddresses: ['127.0.0.1'] });
  const appliances = options.appliances ?? [];
  const organizations = options.organizations ?? [{ id: 12, name: 'Branch Networks' }];
  const log: LegacyRequest[] = [];
  let failing: { count: number; status: number; message: string } | undefined;

  function errorText(status: number, message: string): string {
    switch (options.errorShape ?? 'model') {
      case 'model':
        return JSON.stringify({ status, message });
      case 'vendor':
        return JSON.stringify({ httpStatusCode: status, messages: [message] });
      case 'text':
        return `<html><body><h1>${status}</h1><p>${message}</p></body></html>`;
      case 'empty':
        return '';
    }
  }

  const server: Server = createServer({ cert: cert.certificatePem, key: cert.privateKeyPem }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://legacy.invalid');
    const answer = (status: number, body: string, type = 'application/json') => {
      log.push({ method: req.method ?? '?', path: `${url.pathname}${url.search}`, status });
      res.writeHead(status, { 'content-type': type }).end(body);
    };
    const error = (status: number, message: string) =>
      answer(status, errorText(status, message), options.errorShape === 'text' ? 'text/html' : 'application/json');
    req.resume();
    const auth = req.headers.authorization;
    if (auth === undefined) return error(401, MESSAGES.noCredentials);
    if (auth.startsWith('Basic ')) return error(401, MESSAGES.undecodable);
    if (auth !== `Token ${options.token}`) return error(401, MESSAGES.badCredentials);
    if (failing !== undefined && failing.count > 0) {
      failing.count -= 1;
      return error(failing.status, failing.message);
    }
    const keys = [...url.searchParams.keys()];
    if (req.method === 'GET' && url.pathname === '/api/v3/organization') {
      return keys.length > 0 ? error(400, MESSAGES[400]) : answer(200, JSON.stringify(organizations));
    }
    if (req.method === 'GET' && url.pathname === '/api/v3/appliance') {
      const hostname = url.searchParams.get('hostname');
      if (keys.some((k) => k !== 'hostname') || (hostname !== null && options.refuseHostname === true))
        return error(400, MESSAGES[400]);
      const listed = appliances
        .filter((a) => hostname === null || a.hostname.toLowerCase() === hostname.toLowerCase())
        .map(({ extra, ...a }) => ({ ...a, ...extra }));
      return answer(200, JSON.stringify(listed));
    }
    return error(404, MESSAGES[404]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/api`,
    caPem: cert.certificatePem,
    appliances,
    failNext(count, status, message) {
      failing = { count, status, message };
    },
    requests: () => [...log],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
