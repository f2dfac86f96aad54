import { z } from 'zod';

/**
 * The simulator's own statement of the data API model (docs/service-model.md): what it serves and the
 * documented error table. Deliberately not imported from src/service: a simulator that shares the
 * client's schemas could only ever agree with it.
 */

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
  connectionStatus: SimConnectionStatus.optional(),
  id: z.number().int().positive().optional(),
});
export type ApplianceRegistration = z.infer<typeof ApplianceRegistration>;

/** One MP as GET /v3/appliance lists it. */
export interface ApplianceJson {
  id: number;
  name: string;
  hostname: string;
  orgId: number;
  macAddress: string | null;
  connectionStatus: SimConnectionStatus;
}

export interface OrganizationJson {
  id: number;
  name: string;
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

/** The error body of the model: `{"status": N, "message": "..."}`. */
export function errorBody(error: { status: number; message: string }): { status: number; message: string } {
  return { status: error.status, message: error.message };
}
