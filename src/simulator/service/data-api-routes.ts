import type { ApplianceRegistry } from './appliance-registry.js';
import type { CallerRateLimit } from './caller-rate-limit.js';
import { sees, type Caller, type ServiceCallers } from './service-callers.js';
import type { ServiceFaults } from './service-faults.js';
import { errorBody, MAC_ADDRESS, SIM_ERRORS, type SimError } from './service-wire.js';

/**
 * One request to the simulated data API, decided: rate limit, faults, credentials, route, Accept,
 * access, parameters, in that order, each refusal with its documented status and message.
 * No I/O here: the server (service-simulator.ts) writes what this returns.
 */

export interface IncomingFacts {
  method: string;
  /** Path and query as received: `/api/v3/appliance?hostname=mp1`. */
  url: string;
  authorization: string | undefined;
  accept: string | undefined;
  remoteAddress: string;
}

export type SimAnswer =
  | { kind: 'json'; status: number; json: unknown; retryAfterS?: number }
  | { kind: 'oversized'; bytes: number }
  | { kind: 'raw'; status: number; text: string; contentType: string };

export interface Decision {
  answer: SimAnswer;
  path: string;
  query: Record<string, string>;
  caller: string;
  fault?: string;
}

export interface RouteContext {
  basePath: string;
  callers: ServiceCallers;
  registry: ApplianceRegistry;
  faults: ServiceFaults;
  rateLimit: CallerRateLimit | undefined;
  now: number;
}

const fail = (error: SimError): SimAnswer => ({ kind: 'json', status: error.status, json: errorBody(error) });

export function decide(facts: IncomingFacts, context: RouteContext): Decision {
  const url = new URL(facts.url, 'https://service.invalid');
  const query = Object.fromEntries(url.searchParams);
  const caller = context.callers.labelOf(facts.authorization) ?? `anonymous ${facts.remoteAddress}`;
  const base = { path: url.pathname, query, caller };

  const retryAfterS = context.rateLimit?.admit(caller, context.now) ?? 0;
  if (retryAfterS > 0) {
    return { ...base, answer: { kind: 'json', status: 429, json: errorBody(SIM_ERRORS.tooManyRequests), retryAfterS } };
  }

  const fault = context.faults.take();
  if (fault?.kind === 'error') return { ...base, fault: `error ${fault.name}`, answer: fail(SIM_ERRORS[fault.name]) };

  const authenticated = context.callers.authenticate(facts.authorization);
  if ('error' in authenticated) return { ...base, answer: fail(authenticated.error) };
  const who = authenticated.caller;

  const endpoint = facts.method === 'GET' ? url.pathname.slice(context.basePath.length) : undefined;
  if (
    !url.pathname.startsWith(`${context.basePath}/`) ||
    (endpoint !== '/v3/organization' && endpoint !== '/v3/appliance')
  ) {
    return { ...base, answer: fail(SIM_ERRORS.notFound) };
  }
  if (!acceptsJson(facts.accept)) return { ...base, answer: fail(SIM_ERRORS.notAcceptable) };
  if (!who.access) return { ...base, answer: fail(SIM_ERRORS.accessDenied) };

  if (fault?.kind === 'oversized-body')
    return { ...base, fault: 'oversized-body', answer: { kind: 'oversized', bytes: fault.bytes } };
  if (fault?.kind === 'raw-body')
    return {
      ...base,
      fault: 'raw-body',
      answer: { kind: 'raw', status: fault.status, text: fault.text, contentType: fault.contentType },
    };

  const params = [...url.searchParams.keys()];
  if (endpoint === '/v3/organization') {
    if (params.length > 0) return { ...base, answer: fail(SIM_ERRORS.badRequest) };
    return { ...base, answer: { kind: 'json', status: 200, json: context.callers.visibleOrganizations(who) } };
  }
  return { ...base, answer: appliances(url.searchParams, who, context) };
}

/** GET /v3/appliance[?hostname=][&mac=]: exact hostname (any case), MAC in aa:bb:cc:dd:ee:ff form. */
function appliances(search: URLSearchParams, caller: Caller, context: RouteContext): SimAnswer {
  const keys = [...search.keys()];
  const known = keys.every((k) => k === 'hostname' || k === 'mac');
  const once = new Set(keys).size === keys.length;
  const hostname = search.get('hostname');
  const mac = search.get('mac');
  if (!known || !once || hostname === '' || (mac !== null && !MAC_ADDRESS.test(mac)))
    return fail(SIM_ERRORS.badRequest);
  const listed = context.registry
    .list()
    .filter((a) => sees(caller, a.orgId))
    .filter((a) => hostname === null || a.hostname.toLowerCase() === hostname.toLowerCase())
    .filter((a) => mac === null || a.macAddress === mac.toLowerCase())
    .map((a) => ({ ...a, connectionStatus: context.faults.statusWord(a.connectionStatus) }));
  return { kind: 'json', status: 200, json: listed };
}

/** Strict on purpose: only an Accept that names application/json itself (a client that forgets it is caught). */
function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept.split(',').some((range) => range.split(';')[0]?.trim().toLowerCase() === 'application/json');
}
