import type { ApplianceRegistry } from './appliance-registry.js';
import type { CallerRateLimit } from './caller-rate-limit.js';
import type { ObserverRegistry } from './observer-registry.js';
import type { PathDataSettings } from './path-data.js';
import type { PathRegistry } from './path-registry.js';
import type { Caller, ServiceCallers } from './service-callers.js';
import type { ServiceFaults } from './service-faults.js';
import { SIM_ERRORS, type ServiceShapes, type SimError } from './service-wire.js';

/** What a route of the simulated data API decides, before the server words and writes it. */
export type SimAnswer =
  | { kind: 'json'; status: number; json: unknown }
  | { kind: 'error'; error: SimError; detail?: string }
  | { kind: 'oversized'; bytes: number }
  | { kind: 'raw'; status: number; text: string; contentType: string };

/** A request body as the server read it: capped, so a huge one is only known to be too large. */
export type RequestBody =
  { kind: 'none' } | { kind: 'text'; text: string; contentType: string | undefined } | { kind: 'too-large' };

export interface RouteContext {
  basePath: string;
  callers: ServiceCallers;
  registry: ApplianceRegistry;
  paths: PathRegistry;
  observers: ObserverRegistry;
  pathData: PathDataSettings;
  faults: ServiceFaults;
  rateLimit: CallerRateLimit | undefined;
  shapes: ServiceShapes;
  /** Epoch ms of the request's arrival: every time-dependent answer uses this one clock reading. */
  now: number;
}

export interface RouteRequest {
  /** The path parameters the route's pattern captured, e.g. the `{id}` of `/v3/path/{id}/status`. */
  params: readonly string[];
  search: URLSearchParams;
  body: RequestBody;
  caller: Caller;
  context: RouteContext;
}

export const ok = (json: unknown, status = 200): SimAnswer => ({ kind: 'json', status, json });

export const refuse = (error: SimError, detail?: string): SimAnswer =>
  detail === undefined ? { kind: 'error', error } : { kind: 'error', error, detail };

/** An id in a path or query: digits only, as the service's integer ids are (`abc`, `-1`, `1e3` are not). */
export function integerId(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined || !/^\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

/** The first problem with a query's keys (unknown or repeated), worded for the 400's second message. */
export function queryProblem(search: URLSearchParams, allowed: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const name of search.keys()) {
    if (!allowed.includes(name)) return `Unknown query parameter: ${shown(name)}`;
    if (seen.has(name)) return `Query parameter given twice: ${name}`;
    seen.add(name);
  }
  return undefined;
}

/** Caller text echoed in a message: bounded and without control characters. */
export function shown(text: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return clean.length > 60 ? `${clean.slice(0, 60)}...` : clean;
}

/** A JSON object body sent as application/json; anything else is a 400 that says what is wrong. */
export function jsonObject(body: RequestBody): { object: Record<string, unknown> } | SimAnswer {
  if (body.kind === 'too-large') return refuse(SIM_ERRORS.badRequest, 'The request body is too large');
  if (body.kind === 'none' || body.text.trim() === '') return refuse(SIM_ERRORS.badRequest, 'A JSON body is required');
  if (body.contentType?.split(';')[0]?.trim().toLowerCase() !== 'application/json')
    return refuse(SIM_ERRORS.badRequest, 'Content-Type must be application/json');
  let value: unknown;
  try {
    value = JSON.parse(body.text);
  } catch {
    return refuse(SIM_ERRORS.badRequest, 'The body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return refuse(SIM_ERRORS.badRequest, 'The body must be a JSON object');
  return { object: value as Record<string, unknown> };
}
