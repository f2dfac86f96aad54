import { queryString, type CallOptions } from './appliance-endpoints.js';
import { NetworkPath, NetworkPathList, PathDataList, PathStatusList } from './data-api-model.js';
import type { PathData, PathStatus } from './data-api-model.js';
import { request, type ServiceConnection } from './service-request.js';

/** Network paths (docs/service-model.md, "Network paths"), one small function per endpoint. */

export function listPaths(
  connection: ServiceConnection,
  orgId: number,
  options: CallOptions = {},
): Promise<NetworkPath[]> {
  return request(connection, { path: `/v3/path${queryString({ orgId })}`, ...options }, NetworkPathList);
}

export interface NewPath {
  /** The MP's `name` in the service. */
  sourceAppliance: string;
  target: string;
  orgId: number;
}

/** POST /v3/path -> 201 with the record. The only write mpprov makes to the service besides a path's location. */
export function createPath(
  connection: ServiceConnection,
  path: NewPath,
  options: CallOptions = {},
): Promise<NetworkPath> {
  return request(
    connection,
    {
      method: 'POST',
      path: '/v3/path',
      body: { sourceAppliance: path.sourceAppliance, target: path.target, orgId: path.orgId },
      ...options,
    },
    NetworkPath,
  );
}

/** PUT /v3/path/{id}/targetLocation: the location cannot be given at creation. */
export function setTargetLocation(
  connection: ServiceConnection,
  id: number,
  targetLocation: string,
  options: CallOptions = {},
): Promise<NetworkPath> {
  return request(
    connection,
    { method: 'PUT', path: `/v3/path/${id}/targetLocation`, body: { targetLocation }, ...options },
    NetworkPath,
  );
}

/** GET /v3/path/status?orgId=: every path's service quality in one organization. */
export function listPathStatuses(
  connection: ServiceConnection,
  orgId: number,
  options: CallOptions = {},
): Promise<PathStatus[]> {
  return request(connection, { path: `/v3/path/status${queryString({ orgId })}`, ...options }, PathStatusList);
}

export interface PathDataQuery {
  orgId: number;
  pathIds: readonly number[];
  /** Epoch ms; the service takes unix seconds. */
  fromMs: number;
}

/** GET /v3/path/data?orgId=&pathIds=&from=: at most 20 path-days per request (the caller splits). */
export function listPathData(
  connection: ServiceConnection,
  query: PathDataQuery,
  options: CallOptions = {},
): Promise<PathData[]> {
  const search = queryString({
    orgId: query.orgId,
    pathIds: query.pathIds.join(','),
    from: Math.floor(query.fromMs / 1000),
  });
  return request(connection, { path: `/v3/path/data${search}`, ...options }, PathDataList);
}
