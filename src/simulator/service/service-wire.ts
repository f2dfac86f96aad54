import { z } from 'zod';

/**
 * The simulator's own statement of the data API model (docs/service-model.md): what it serves and the
 * documented error table. Deliberately not imported from src/service: a simulator that shares the
 * client's schemas could only ever agree with it.
 *
 * Two dialects: `vendor` (default) answers as the vendor's own sample clients read the service
 * (`displayName`, `resolvedIp`, `{"httpStatusCode", "messages"}`); `legacy` keeps this project's
 * earlier model (`name`, no `resolvedIp`, `{"status", "message"}`) so the client's tolerance of it
 * can be tested.
 */

export type ServiceShapes = 'vendor' | 'legacy';

const SIM_CONNECTION_STATUSES = ['AVAILABLE', 'UNAVAILABLE', 'REMOVED', 'NEW', 'BLOCKED'] as const;
export const SimConnectionStatus = z.enum(SIM_CONNECTION_STATUSES);
export type SimConnectionStatus = z.infer<typeof SimConnectionStatus>;

export const MAC_ADDRESS = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i;

/** What registerAppliance accepts (checked, so a rig's typo fails loudly). */
export const ApplianceRegistration = z.strictObject({
  hostname: z.string().min(1),
  name: z.string().min(1).optional(),
  orgId: z.number().int().optional(),
  macAddress: z.string().regex(MAC_ADDRESS).optional(),
  /** The address the service sees the MP at; default one of 198.51.100.0/24 by its id. */
  resolvedIp: z.string().min(1).optional(),
  connectionStatus: SimConnectionStatus.optional(),
  id: z.number().int().positive().optional(),
});
export type ApplianceRegistration = z.infer<typeof ApplianceRegistration>;

/** One MP as the simulator holds it; `applianceJson` words it per dialect. */
export interface ApplianceJson {
  id: number;
  name: string;
  hostname: string;
  orgId: number;
  macAddress: string | null;
  resolvedIp: string;
  connectionStatus: SimConnectionStatus;
}

/** An organization as a test or rehearsal sets it up; worded `displayName` or `name` on the wire. */
export interface OrganizationSpec {
  id: number;
  name: string;
}

export function organizationJson(organization: OrganizationSpec, shapes: ServiceShapes): Record<string, unknown> {
  return shapes === 'vendor'
    ? { id: organization.id, displayName: organization.name }
    : { id: organization.id, name: organization.name };
}

/** The four vendor fields plus the model's hostname, orgId and macAddress; legacy: without resolvedIp. */
export function applianceJson(
  appliance: ApplianceJson,
  shapes: ServiceShapes,
  statusWord: string = appliance.connectionStatus,
): Record<string, unknown> {
  const { id, name, hostname, orgId, macAddress, resolvedIp } = appliance;
  return shapes === 'vendor'
    ? { id, name, resolvedIp, connectionStatus: statusWord, hostname, orgId, macAddress }
    : { id, name, hostname, orgId, macAddress, connectionStatus: statusWord };
}

/** docs/service-model.md, "Transport", plus the model's 429: status and exact message. */
export const SIM_ERRORS = {
  badRequest: { status: 400, message: 'Bad Request' },
  noCredentials: { status: 401, message: 'Full authentication is required to access this resource' },
  badCredentials: { status: 401, message: 'Bad credentials' },
  undecodable: { status: 401, message: 'Failed to decode basic authentication token' },
  accessDenied: { status: 403, message: 'Access is denied' },
  notFound: { status: 404, message: 'Not found' },
  notAcceptable: { status: 406, message: 'Not Acceptable' },
  tooManyRequests: { status: 429, message: 'Too Many Requests' },
  internal: { status: 500, message: 'Internal server error' },
} as const;
export type SimErrorName = keyof typeof SIM_ERRORS;
export type SimError = (typeof SIM_ERRORS)[SimErrorName];

/**
 * The error body: vendor `{"httpStatusCode": N, "messages": [message, detail?]}`, where a 400 that
 * names what is wrong carries it as the second message; legacy `{"status": N, "message": "..."}`
 * (the earlier model had no room for the detail).
 */
export function errorBody(error: SimError, shapes: ServiceShapes, detail?: string): Record<string, unknown> {
  if (shapes === 'legacy') return { status: error.status, message: error.message };
  return { httpStatusCode: error.status, messages: detail === undefined ? [error.message] : [error.message, detail] };
}
