import { ApplianceList, OrganizationList, type Appliance, type Organization } from './data-api-model.js';
import { request, type ServiceConnection } from './service-request.js';

/** The two endpoints mpprov uses (docs/service-model.md), one small function each. */

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Called each time the request leaves, after its rate-limit turn came. */
  onSent?: (() => void) | undefined;
}

/** Query names of the model; both optional, neither lists every MP the caller may see. */
export interface ApplianceQuery {
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
  const params = new URLSearchParams();
  if (query.hostname !== undefined) params.set('hostname', query.hostname);
  if (query.mac !== undefined) params.set('mac', query.mac);
  const search = params.toString();
  return request(
    connection,
    { path: search === '' ? '/v3/appliance' : `/v3/appliance?${search}`, ...options },
    ApplianceList,
  );
}
