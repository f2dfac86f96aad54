import { z } from 'zod';

/**
 * The part of the data API mpprov reads (docs/service-model.md), one zod schema and one type per
 * thing. The shapes are the vendor's (what its own sample clients read); everything else is
 * optional: a real service may add fields or leave the model's out, and neither may fail a check.
 * Records mpprov hands on (organizations, MPs, paths) keep only the fields named here: what a
 * service adds may be megabytes, nested deeper than JSON.stringify can write, or an echo of the
 * token, and these records go into --json, the result files and the status page.
 */

/** The documented statuses of a Monitoring Point. */
export const CONNECTION_STATUSES = ['AVAILABLE', 'UNAVAILABLE', 'REMOVED', 'NEW', 'BLOCKED'] as const;

/**
 * Any status, read tolerantly: a real service may say ONLINE, OFFLINE or something new, and that
 * is an answer to report ("the service says ONLINE"), never an answer of the wrong shape.
 */
export const ConnectionStatus = z.string();
export type ConnectionStatus = z.infer<typeof ConnectionStatus>;

/** An id as the service sends it; a record without a usable one cannot be asked for again, nor named. */
const Id = z.number().int();
/** Optional fields the client can live without: a wrong type there is treated as absent, not as a broken answer. */
const lenient = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);

export const Organization = z.object({
  id: Id,
  /** The vendor's field. */
  displayName: lenient(z.string()),
  /** Earlier versions of the model. */
  name: lenient(z.string()),
});
export type Organization = z.infer<typeof Organization>;

/** How an organization is named: its displayName, else its name, else its id. */
export function organizationName(organization: Organization): string {
  return organization.displayName ?? organization.name ?? `organization ${organization.id}`;
}

export const Appliance = z.object({
  id: Id,
  name: z.string(),
  /** The vendor's field; a record may leave it out or send null (an MP never seen). */
  resolvedIp: lenient(z.string().nullable()),
  connectionStatus: ConnectionStatus,
  /** The model's fields: a vendor-true service may leave them out. */
  hostname: lenient(z.string()),
  orgId: lenient(Id),
  // A virtual MP may have no MAC address the service knows of.
  macAddress: lenient(z.string().nullable()),
});
export type Appliance = z.infer<typeof Appliance>;

/**
 * A list whose unreadable records are left out: one record of the wrong types (another MP's, a
 * path of another team) must not cost every other record its answer. A list where no record is
 * readable is an answer of the wrong shape, said with the first record's problems.
 */
function listOf<T extends z.ZodType>(record: T) {
  return z.array(z.unknown()).transform((entries, ctx): z.infer<T>[] => {
    const read: z.infer<T>[] = [];
    let firstIssues: { path: PropertyKey[]; message: string }[] | undefined;
    for (const [index, entry] of entries.entries()) {
      const parsed = record.safeParse(entry);
      if (parsed.success) read.push(parsed.data);
      else
        firstIssues ??= parsed.error.issues.map((issue) => ({ path: [index, ...issue.path], message: issue.message }));
    }
    if (read.length === 0 && firstIssues !== undefined)
      for (const issue of firstIssues) ctx.addIssue({ code: 'custom', ...issue });
    return read;
  });
}

export const OrganizationList = listOf(Organization);
export const ApplianceList = listOf(Appliance);

/** A network path: identified by (sourceAppliance, target); the rest is optional. */
export const NetworkPath = z.object({
  id: Id,
  sourceAppliance: z.string(),
  target: z.string(),
  pathName: lenient(z.string()),
  orgId: lenient(Id),
  instrumentation: lenient(z.string()),
  targetLocation: lenient(z.string().nullable()),
});
export type NetworkPath = z.infer<typeof NetworkPath>;
export const NetworkPathList = listOf(NetworkPath);

/** A path's service quality: SQA_NOT_VIOLATED, INDETERMINATE, SQA_VIOLATED, DISABLED, or a word mpprov does not know. */
export const PathStatus = z.object({ pathId: Id, status: z.string() });
export type PathStatus = z.infer<typeof PathStatus>;
export const PathStatusList = listOf(PathStatus);

/** One direction of a path's data: the 13 documented arrays (and any the service adds), each of elements. */
const DataArrays = lenient(z.record(z.string(), z.unknown()).nullable());

export const PathData = z.looseObject({
  pathId: Id,
  data: DataArrays,
  dataInbound: DataArrays,
  dataOutbound: DataArrays,
});
export type PathData = z.infer<typeof PathData>;
export const PathDataList = listOf(PathData);

/** Whether a data record holds at least one element in any of its arrays, in any direction. */
export function holdsData(record: PathData): boolean {
  return [record.data, record.dataInbound, record.dataOutbound].some(
    // Only whether there is an element counts, so an element's own fields are not checked.
    (arrays) => arrays != null && Object.values(arrays).some((values) => Array.isArray(values) && values.length > 0),
  );
}

/** The time (unix s) of a data record's newest element, when its elements carry one. */
export function lastDataTime(record: PathData): number | undefined {
  let latest: number | undefined;
  for (const arrays of [record.data, record.dataInbound, record.dataOutbound]) {
    if (arrays == null) continue;
    for (const values of Object.values(arrays)) {
      if (!Array.isArray(values)) continue;
      for (const element of values) {
        const time = DataTime.safeParse(element);
        if (time.success && (latest === undefined || time.data.time > latest)) latest = time.data.time;
      }
    }
  }
  return latest;
}
/** The largest time (unix s) a Date holds: a later one (a service's broken clock) is no time at all. */
const MAX_DATE_S = 8.64e12;
const DataTime = z.looseObject({ time: z.number().min(-MAX_DATE_S).max(MAX_DATE_S) });

/**
 * An error answer, in either shape: the vendor's `{"httpStatusCode": 401, "messages": ["Bad
 * credentials"]}` or the earlier model's `{"status": 401, "message": "Bad credentials"}`. Read
 * leniently: any field may be missing or of another type.
 */
export const ErrorBody = z.looseObject({
  httpStatusCode: lenient(z.number()),
  messages: lenient(z.array(z.unknown())),
  status: lenient(z.number()),
  message: lenient(z.string()),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** The messages of an error body, in order: `messages` (strings only), else `message`. */
export function errorMessages(body: ErrorBody): string[] {
  const listed = (body.messages ?? []).filter((m): m is string => typeof m === 'string');
  if (listed.length > 0) return listed;
  return body.message === undefined ? [] : [body.message];
}

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
