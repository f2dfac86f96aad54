import { Appliance, ApplianceList, OrganizationList, type Organization } from './data-api-model.js';
import type { Priority } from './rate-limiter.js';
import { request, type ServiceConnection } from './service-request.js';

/** Organizations and Monitoring Points (docs/service-model.md), one small function per endpoint. */

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Called each time the request leaves, after its rate-limit turn came. */
  onSent?: (() => void) | undefined;
  /** Default `normal`; a round many devices wait on is `high`. */
  priority?: Priority | undefined;
}

/** Query names (vendor client: orgId; model: hostname, mac); none lists every MP the caller may see. */
export interface ApplianceQuery {
  orgId?: number | undefined;
  hostname?: string | undefined;
  /** `aa:bb:cc:dd:ee:ff` */
  mac?: string | undefined;
}

export function listOrganizations(connection: ServiceConnection, options: CallOptions = {}): Promise<Organization[]> {
  return request(connection, { path: '/v3/organization', ...options }, OrganizationList);
}

export function listAppliances(
  connection: ServiceConnection,
  query: ApplianceQuery = {},
  options: CallOptions = {},
): Promise<Appliance[]> {
  const search = queryString({ orgId: query.orgId, hostname: query.hostname, mac: query.mac });
  return request(connection, { path: `/v3/appliance${search}`, ...options }, ApplianceList);
}

/** GET /v3/appliance/{id}: one MP; 404 when the service does not know it (or hides it from the caller). */
export function getAppliance(connection: ServiceConnection, id: number, options: CallOptions = {}): Promise<Appliance> {
  return request(connection, { path: `/v3/appliance/${id}`, ...options }, Appliance);
}

/** `?a=1&b=x` of the given values (undefined ones left out), or '' when none is given. */
export function queryString(values: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) if (value !== undefined) params.set(key, String(value));
  const search = params.toString();
  return search === '' ? '' : `?${search}`;
}
