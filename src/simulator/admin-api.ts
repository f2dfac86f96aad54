import type { IncomingMessage } from 'node:http';
import { parseAclRule, type AccessControlList } from './access-control-list.js';
import type { ConfigState, DeviceConfig, Outcome } from './device-config.js';
import { capabilityOf, interfaceKind } from './device-model.js';
import { handleUpload, UPLOAD_BODY_LIMIT } from './file-upload.js';
import { BodyTooLarge, KiB, parseJsonBody, readBody } from './http-exchange.js';
import { renderInterface, renderInterfaces } from './interface-view.js';
import type { NetworkStatus } from './network-status.js';
import type { RateLimiter } from './rate-limiter.js';
import { redactBody } from './request-log.js';

/**
 * The Admin API v1 endpoints of docs/device-model.md, one small function each, over the device's
 * state. Transport concerns (TLS, auth, faults, outages) stay in simulated-device.ts.
 */

export type OutageKind = 'restart' | 'reboot';

export interface AdminApiDevice {
  config: DeviceConfig;
  acl: AccessControlList;
  network(): NetworkStatus;
  /** Undefined when the limit is switched off. */
  serviceLimiter: RateLimiter | undefined;
  /** Rehearsal aid beyond the model: `dot1x_state` in the active view of GET /interface/. */
  showDot1xState: boolean;
}

export interface ApiResponse {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  /** The request body as the request log shows it (write-only values redacted). */
  logged?: unknown;
  /** An outage to start once the response has been sent. */
  outage?: OutageKind;
}

interface Request {
  req: IncomingMessage;
  url: URL;
  params: string[];
  device: AdminApiDevice;
}

type Handler = (r: Request) => Promise<ApiResponse> | ApiResponse;

interface Route {
  pattern: RegExp;
  methods: Partial<Record<string, Handler>>;
}

const JSON_LIMIT = 64 * KiB;
const NAME = '([A-Za-z0-9][A-Za-z0-9._-]*)';

const ok = (extra: Record<string, unknown> = {}): ApiResponse => ({ status: 200, body: { success: true, ...extra } });
const failure = (status: number, error: string, headers?: Record<string, string>): ApiResponse => ({
  status,
  body: { success: false, error },
  ...(headers !== undefined ? { headers } : {}),
});
const fromOutcome = (outcome: Outcome, logged: unknown): ApiResponse => ({
  ...(outcome.ok ? ok() : failure(outcome.status, outcome.error)),
  logged,
});

const ROUTES: Route[] = [
  { pattern: /^\/api\/v1\/interface\/$/, methods: { GET: listInterfaces, POST: postInterface } },
  { pattern: /^\/api\/v1\/interface\/file\/$/, methods: { POST: uploadFiles } },
  {
    pattern: new RegExp(`^/api/v1/interface/${NAME}/$`),
    methods: { GET: getInterface, PUT: putInterface, DELETE: deleteInterface },
  },
  { pattern: new RegExp(`^/api/v1/service/${NAME}/$`), methods: { PUT: serviceAction } },
  { pattern: /^\/api\/v1\/appliance\/$/, methods: { PUT: applianceAction } },
  // The one path the model lists without a trailing slash; taken as listed, like every other.
  { pattern: /^\/api\/v1\/appliance\/capability$/, methods: { GET: capability } },
  { pattern: /^\/api\/v1\/access_control\/acl\/$/, methods: { GET: listAcl, PUT: addAcl, DELETE: deleteAcl } },
];

export async function handleAdminRequest(req: IncomingMessage, url: URL, device: AdminApiDevice): Promise<ApiResponse> {
  const method = req.method ?? 'GET';
  for (const route of ROUTES) {
    const match = route.pattern.exec(url.pathname);
    if (match === null) continue;
    const handler = route.methods[method];
    if (handler === undefined) {
      const allow = Object.keys(route.methods).join(', ');
      return failure(405, `Method ${method} is not allowed on ${url.pathname}; allowed: ${allow}.`, { allow });
    }
    try {
      return await handler({ req, url, params: match.slice(1), device });
    } catch (error) {
      if (error instanceof BodyTooLarge)
        return { ...failure(413, 'Request body is too large.'), headers: { connection: 'close' } };
      throw error;
    }
  }
  const withSlash = `${url.pathname}/`;
  const withoutSlash = url.pathname.replace(/\/$/, '');
  const hint = ROUTES.some((r) => r.pattern.test(withSlash))
    ? ` (paths end with a slash: ${withSlash})`
    : withoutSlash !== url.pathname && ROUTES.some((r) => r.pattern.test(withoutSlash))
      ? ` (this path has no trailing slash: ${withoutSlash})`
      : '';
  return failure(404, `No such endpoint: ${method} ${url.pathname}${hint}.`);
}

type BodyRead = { ok: true; value: unknown } | { ok: false; response: ApiResponse };

/**
 * A JSON body (undefined when there is none), or the 400 to answer. Every JSON body needs
 * `Content-Type: application/json` (docs/device-model.md, "Requests"): the header is judged before
 * the bytes, as a device that dispatches on it would.
 */
async function jsonBody(req: IncomingMessage): Promise<BodyRead> {
  const bytes = await readBody(req, JSON_LIMIT);
  if (bytes.toString('utf8').trim() === '') return { ok: true, value: undefined };
  const contentType = req.headers['content-type'];
  if (!isJsonContentType(contentType)) {
    const sent = contentType === undefined ? 'none' : `"${contentType}"`;
    return {
      ok: false,
      response: failure(
        400,
        `A JSON body needs the header "Content-Type: application/json"; this request sent ${sent}.`,
      ),
    };
  }
  const parsed = parseJsonBody(bytes);
  return parsed.ok ? parsed : { ok: false, response: failure(400, 'Request body is not valid JSON.') };
}

/** `application/json`, with any parameters (`; charset=utf-8`), in any letter case. */
function isJsonContentType(header: string | undefined): boolean {
  return header !== undefined && header.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

/** `config_state` is required on both GETs of the interface resource; no default. */
function configState(url: URL): { ok: true; state: ConfigState } | { ok: false; response: ApiResponse } {
  const value = url.searchParams.get('config_state');
  if (value === 'active' || value === 'pending') return { ok: true, state: value };
  return {
    ok: false,
    response: failure(400, value === null ? MISSING_CONFIG_STATE : BAD_CONFIG_STATE),
  };
}

const BAD_CONFIG_STATE = 'Query parameter "config_state" must be "active" or "pending".';
const MISSING_CONFIG_STATE = 'Query parameter "config_state" is required: "active" or "pending".';

function listInterfaces({ url, device }: Request): ApiResponse {
  const query = configState(url);
  if (!query.ok) return query.response;
  return ok({ interfaces: renderInterfaces(device.config, device.network(), query.state, viewOptions(device)) });
}

function getInterface({ url, params, device }: Request): ApiResponse {
  const name = params[0] ?? '';
  const query = configState(url);
  if (!query.ok) return query.response;
  if (interfaceKind(device.config.model, name) === undefined)
    return failure(404, `No interface "${name}" on this device.`);
  const view = renderInterface(device.config, device.network(), name, query.state, viewOptions(device));
  if (view === undefined) return failure(404, `Interface "${name}" has no ${query.state} configuration.`);
  return ok({ interface: view });
}

const viewOptions = (device: AdminApiDevice) => ({ showDot1xState: device.showDot1xState });

async function postInterface({ req, device }: Request): Promise<ApiResponse> {
  const body = await jsonBody(req);
  if (!body.ok) return body.response;
  if (typeof body.value !== 'object' || body.value === null || Array.isArray(body.value)) {
    return { ...failure(400, 'Request body must be a JSON object.'), logged: redactBody(body.value) };
  }
  return fromOutcome(device.config.post(body.value), redactBody(body.value));
}

async function putInterface({ req, params, device }: Request): Promise<ApiResponse> {
  const body = await jsonBody(req);
  if (!body.ok) return body.response;
  return fromOutcome(device.config.put(params[0] ?? '', body.value), redactBody(body.value));
}

function deleteInterface({ url, params, device }: Request): ApiResponse {
  return fromOutcome(device.config.remove(params[0] ?? '', url.searchParams.get('family')), undefined);
}

async function uploadFiles({ req, device }: Request): Promise<ApiResponse> {
  // The device does not implement 100-continue; the documented curl call clears the header.
  const expectHeader = req.headers['expect'];
  if (expectHeader !== undefined && expectHeader.trim() !== '') {
    return {
      ...failure(
        417,
        `Expect: ${expectHeader} is not supported by POST /interface/file/; send the request without it (curl -H "Expect:").`,
      ),
      headers: { connection: 'close' },
    };
  }
  const body = await readBody(req, UPLOAD_BODY_LIMIT);
  const outcome = await handleUpload(device.config, body, req.headers['content-type'] ?? '');
  if (!outcome.ok) {
    return {
      ...failure(outcome.status, outcome.error),
      ...(outcome.status === 413 ? { headers: { connection: 'close' } } : {}),
    };
  }
  return { ...ok({ files: outcome.files }), logged: { files: outcome.files } };
}

async function serviceAction({ req, url, params, device }: Request): Promise<ApiResponse> {
  const service = params[0] ?? '';
  if (service !== 'networking')
    return failure(404, `No service "${service}"; the device has the service "networking".`);
  if (url.searchParams.get('action') !== 'restart') return failure(400, 'Query parameter "action" must be "restart".');
  const body = await jsonBody(req);
  if (!body.ok) return body.response;
  // The documented call sends exactly `{}`; a client that sends nothing or something else has a bug.
  if (body.value === undefined) return failure(400, RESTART_BODY);
  if (!isEmptyObject(body.value)) return { ...failure(400, RESTART_BODY), logged: redactBody(body.value) };
  const limiter = device.serviceLimiter;
  const wait = limiter?.retryAfterSeconds() ?? 0;
  if (wait > 0) {
    const { perSecond, perMinute } = limiter?.limit ?? { perSecond: 0, perMinute: 0 };
    return failure(
      429,
      `Too many service actions: at most ${perSecond} per second and ${perMinute} per minute; retry in ${wait} s.`,
      {
        'retry-after': String(wait),
      },
    );
  }
  limiter?.record();
  return { status: 202, body: { success: true }, logged: redactBody(body.value), outage: 'restart' };
}

const RESTART_BODY =
  'PUT /service/networking/?action=restart needs the JSON body {} (with "Content-Type: application/json").';

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

/** The model gives no body for a reboot; one sent anyway follows the rule of every JSON body. */
async function applianceAction({ req, url }: Request): Promise<ApiResponse> {
  if (url.searchParams.get('action') !== 'reboot') return failure(400, 'Query parameter "action" must be "reboot".');
  const body = await jsonBody(req);
  if (!body.ok) return body.response;
  return { status: 202, body: { success: true }, outage: 'reboot' };
}

function capability({ device }: Request): ApiResponse {
  return ok({ interfaces: capabilityOf(device.config.model) });
}

function listAcl({ device }: Request): ApiResponse {
  return ok({ rules: device.acl.list() });
}

async function addAcl({ req, device }: Request): Promise<ApiResponse> {
  const body = await jsonBody(req);
  if (!body.ok) return body.response;
  const rule = parseAclRule(body.value, device.config.model);
  if (!rule.ok) return { ...failure(400, rule.error), logged: body.value };
  device.acl.add(rule.value);
  return { ...ok(), logged: body.value };
}

async function deleteAcl({ req, device }: Request): Promise<ApiResponse> {
  const body = await jsonBody(req);
  if (!body.ok) return body.response;
  if (body.value === undefined) {
    device.acl.clear();
    return ok();
  }
  const rule = parseAclRule(body.value, device.config.model);
  if (!rule.ok) return { ...failure(400, rule.error), logged: body.value };
  if (!device.acl.remove(rule.value))
    return { ...failure(404, 'No such rule in the access control list.'), logged: body.value };
  return { ...ok(), logged: body.value };
}
