import { z } from 'zod';

/**
 * The part of the data API mpprov reads (docs/service-model.md), one zod schema and one type per
 * thing. Objects are loose: the service may add fields, and an addition must not fail a check.
 */

/** The documented statuses of a Monitoring Point. */
export const CONNECTION_STATUSES = ['AVAILABLE', 'UNAVAILABLE', 'REMOVED', 'NEW', 'BLOCKED'] as const;

/**
 * Any status, read tolerantly: a real service may say ONLINE, OFFLINE or something new, and that
 * is an answer to report ("the service says ONLINE"), never an answer of the wrong shape.
 */
export const ConnectionStatus = z.string();
export type ConnectionStatus = z.infer<typeof ConnectionStatus>;

export const Organization = z.looseObject({
  id: z.number().int(),
  name: z.string(),
});
export type Organization = z.infer<typeof Organization>;

export const Appliance = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  hostname: z.string(),
  orgId: z.number().int(),
  // A virtual MP may have no MAC address the service knows of.
  macAddress: z.string().nullable().optional(),
  connectionStatus: ConnectionStatus,
});
export type Appliance = z.infer<typeof Appliance>;

export const OrganizationList = z.array(Organization);
export const ApplianceList = z.array(Appliance);

/** An error answer (model): `{"status": 401, "message": "Bad credentials"}`; read leniently. */
export const ErrorBody = z.looseObject({ status: z.number().optional(), message: z.string().optional() });

/** The documented messages (docs/service-model.md, "Transport"): the only way to tell the three 401s apart. */
export const ServiceMessage = {
  BadRequest: 'Bad Request',
  NoCredentials: 'Full authentication is required to access this resource',
  BadCredentials: 'Bad credentials',
  UndecodableCredentials: 'Failed to decode basic authentication token',
  AccessDenied: 'Access is denied',
  NotFound: 'Not found',
  NotAcceptable: 'Not Acceptable',
  TooManyRequests: 'Too Many Requests',
  InternalServerError: 'Internal server error',
} as const;
