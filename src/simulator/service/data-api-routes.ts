import { applianceById, applianceList, organizations } from './appliance-routes.js';
import { observerDelete, observerList, observerPost } from './observer-routes.js';
import { pathDataBulk, pathDataOne } from './path-data-routes.js';
import { pathCreate, pathDelete, pathList, pathStatusList, pathStatusOne, pathTargetLocation } from './path-routes.js';
import { refuse, type RequestBody, type RouteContext, type RouteRequest, type SimAnswer } from './route-types.js';
import { errorBody, SIM_ERRORS } from './service-wire.js';

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
  body: RequestBody;
}

/** What the server writes: errors already worded in the service's dialect. */
export type WireAnswer =
  | { kind: 'json'; status: number; json: unknown; retryAfterS?: number }
  | Exclude<SimAnswer, { kind: 'json' } | { kind: 'error' }>;

export interface Decision {
  answer: WireAnswer;
  path: string;
  query: Record<string, string>;
  /** Which endpoint was asked (`path-create`, ...; `unknown` for none), so requests can be counted per kind. */
  kind: RequestKind;
  caller: string;
  fault?: string;
}

interface Route {
  method: string;
  pattern: RegExp;
  kind: string;
  handle(request: RouteRequest): SimAnswer;
}

/** Below the base path. More specific patterns first: `/v3/path/status` is not a path's id. */
const ROUTES = [
  { method: 'GET', pattern: /^\/v3\/organization$/, kind: 'organization-list', handle: organizations },
  { method: 'GET', pattern: /^\/v3\/appliance$/, kind: 'appliance-list', handle: applianceList },
  { method: 'GET', pattern: /^\/v3\/appliance\/([^/]+)$/, kind: 'appliance-get', handle: applianceById },
  { method: 'GET', pattern: /^\/v3\/path$/, kind: 'path-list', handle: pathList },
  { method: 'POST', pattern: /^\/v3\/path$/, kind: 'path-create', handle: pathCreate },
  { method: 'GET', pattern: /^\/v3\/path\/status$/, kind: 'path-status-list', handle: pathStatusList },
  { method: 'GET', pattern: /^\/v3\/path\/data$/, kind: 'path-data-bulk', handle: pathDataBulk },
  {
    method: 'PUT',
    pattern: /^\/v3\/path\/([^/]+)\/targetLocation$/,
    kind: 'path-location',
    handle: pathTargetLocation,
  },
  { method: 'GET', pattern: /^\/v3\/path\/([^/]+)\/status$/, kind: 'path-status', handle: pathStatusOne },
  { method: 'GET', pattern: /^\/v3\/path\/([^/]+)\/data$/, kind: 'path-data', handle: pathDataOne },
  { method: 'DELETE', pattern: /^\/v3\/path\/([^/]+)$/, kind: 'path-delete', handle: pathDelete },
  { method: 'POST', pattern: /^\/v3\/observer$/, kind: 'observer-post', handle: observerPost },
  { method: 'GET', pattern: /^\/v3\/observer$/, kind: 'observer-list', handle: observerList },
  { method: 'DELETE', pattern: /^\/v3\/observer$/, kind: 'observer-delete', handle: observerDelete },
] as const satisfies readonly Route[];

export type RequestKind = (typeof ROUTES)[number]['kind'] | 'unknown';

export function decide(facts: IncomingFacts, context: RouteContext): Decision {
  const url = new URL(facts.url, 'https://service.invalid');
  const query = Object.fromEntries(url.searchParams);
  const caller = context.callers.labelOf(facts.authorization) ?? `anonymous ${facts.remoteAddress}`;
  const matched = match(facts.method, url.pathname, context.basePath);
  const base = { path: url.pathname, query, caller, kind: matched?.route.kind ?? 'unknown' } as const;
  const word = (answer: SimAnswer): WireAnswer =>
    answer.kind === 'error'
      ? { kind: 'json', status: answer.error.status, json: errorBody(answer.error, context.shapes, answer.detail) }
      : answer;

  const retryAfterS = context.rateLimit?.admit(caller, context.now) ?? 0;
  if (retryAfterS > 0) {
    const json = errorBody(SIM_ERRORS.tooManyRequests, context.shapes);
    return { ...base, answer: { kind: 'json', status: 429, json, retryAfterS } };
  }

  const fault = context.faults.take();
  if (fault?.kind === 'error')
    return { ...base, fault: `error ${fault.name}`, answer: word(refuse(SIM_ERRORS[fault.name])) };

  const authenticated = context.callers.authenticate(facts.authorization);
  if ('error' in authenticated) return { ...base, answer: word(refuse(authenticated.error)) };
  const who = authenticated.caller;

  if (matched === undefined) return { ...base, answer: word(refuse(SIM_ERRORS.notFound)) };
  if (!acceptsJson(facts.accept)) return { ...base, answer: word(refuse(SIM_ERRORS.notAcceptable)) };
  if (!who.access) return { ...base, answer: word(refuse(SIM_ERRORS.accessDenied)) };

  if (fault?.kind === 'oversized-body')
    return { ...base, fault: 'oversized-body', answer: { kind: 'oversized', bytes: fault.bytes } };
  if (fault?.kind === 'raw-body')
    return {
      ...base,
      fault: 'raw-body',
      answer: { kind: 'raw', status: fault.status, text: fault.text, contentType: fault.contentType },
    };

  const refusedHostname =
    matched.route.kind === 'appliance-list' && url.searchParams.has('hostname') && context.faults.refusesHostnameQuery;
  const answer = matched.route.handle({
    params: matched.params,
    search: url.searchParams,
    body: facts.body,
    caller: who,
    context,
  });
  return { ...base, ...(refusedHostname ? { fault: 'hostname-query: refused' } : {}), answer: word(answer) };
}

function match(
  method: string,
  pathname: string,
  basePath: string,
): { route: (typeof ROUTES)[number]; params: string[] } | undefined {
  if (!pathname.startsWith(`${basePath}/`)) return undefined;
  const endpoint = pathname.slice(basePath.length);
  for (const route of ROUTES) {
    if (route.method !== method) continue;
    const found = route.pattern.exec(endpoint);
    if (found !== null) return { route, params: found.slice(1).map((p) => safeDecode(p)) };
  }
  return undefined;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Strict on purpose: only an Accept that names application/json itself (a client that forgets it is caught). */
function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept.split(',').some((range) => range.split(';')[0]?.trim().toLowerCase() === 'application/json');
}
