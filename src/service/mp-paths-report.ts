import { pickAppliance } from './appliance-match.js';
import { appliancesNamed } from './appliances-named.js';
import type { DataApi } from './data-api-client.js';
import { lastDataTime, type Appliance, type NetworkPath } from './data-api-model.js';

/**
 * `mpprov service paths HOSTNAME...`: each MP's paths as the service has them, with their status
 * and the time of their last data in the last hour. Reads only. Per MP: its record (by hostname,
 * or, for a service that refuses that query, from a list), the paths of its organization whose
 * sourceAppliance is its name, the organization's statuses, and the paths' data in requests of
 * at most 20 path-days.
 */

export interface PathReport {
  id: number;
  target: string;
  status?: string | undefined;
  /** Epoch ms of the newest element in the last hour; undefined: none. */
  lastDataAt?: number | undefined;
  location?: string | undefined;
}

export type MpPathsReport =
  | { hostname: string; known: false }
  | { hostname: string; known: true; appliance: Appliance; orgId: number; paths: PathReport[] }
  | { hostname: string; known: true; appliance: Appliance; orgId: undefined; paths: [] };

const HOUR_MS = 3_600_000;
/**
 * An hour is 1/24 of a day: 480 paths would make 20 path-days, but an hour of every sample of a
 * path's 13 arrays is a few hundred KiB: 5 paths keep an answer well under the 4 MiB cap.
 */
const PATHS_PER_REQUEST = 5;

/** Throws the service's error (the caller says it): a listing has no wait to look past a failure in. */
export async function reportMpPaths(
  client: DataApi,
  hostname: string,
  options: { orgId?: number | undefined } = {},
): Promise<MpPathsReport> {
  const appliance = pickAppliance(await appliancesNamed(client, hostname, options.orgId), hostname);
  if (appliance === undefined) return { hostname, known: false };
  const orgId = appliance.orgId ?? options.orgId ?? (await soleOrganization(client));
  if (orgId === undefined) return { hostname, known: true, appliance, orgId: undefined, paths: [] };
  const name = appliance.name.toLowerCase();
  const paths = (await client.listPaths(orgId)).filter((p) => p.sourceAppliance.toLowerCase() === name);
  if (paths.length === 0) return { hostname, known: true, appliance, orgId, paths: [] };
  const statuses = new Map((await client.listPathStatuses(orgId)).map((s) => [s.pathId, s.status]));
  const lastData = await lastDataOf(client, orgId, paths);
  return {
    hostname,
    known: true,
    appliance,
    orgId,
    paths: paths.map((p) => ({
      id: p.id,
      target: p.target,
      status: statuses.get(p.id),
      lastDataAt: lastData.get(p.id),
      location: p.targetLocation ?? undefined,
    })),
  };
}

async function soleOrganization(client: DataApi): Promise<number | undefined> {
  const organizations = await client.listOrganizations();
  return organizations.length === 1 ? organizations[0]?.id : undefined;
}

async function lastDataOf(client: DataApi, orgId: number, paths: readonly NetworkPath[]): Promise<Map<number, number>> {
  const latest = new Map<number, number>();
  const fromMs = Date.now() - HOUR_MS;
  for (let start = 0; start < paths.length; start += PATHS_PER_REQUEST) {
    const pathIds = paths.slice(start, start + PATHS_PER_REQUEST).map((p) => p.id);
    for (const record of await client.listPathData({ orgId, pathIds, fromMs })) {
      const time = lastDataTime(record);
      if (time !== undefined) latest.set(record.pathId, time * 1000);
    }
  }
  return latest;
}
