import { pathStatus } from './path-data.js';
import { pathJson, type PathRecord } from './path-registry.js';
import {
  integerId,
  jsonObject,
  ok,
  queryProblem,
  refuse,
  shown,
  type RouteRequest,
  type SimAnswer,
} from './route-types.js';
import { sees } from './service-callers.js';
import { SIM_ERRORS } from './service-wire.js';

/**
 * Network paths (docs/service-model.md, "Network paths"): list, create, targetLocation, delete
 * and status. The data endpoints are in path-data-routes.ts.
 */

/** Documented: a network path name is at most 200 characters. */
const PATH_NAME_MAX = 200;
/** A host name is at most 253 characters; an address is shorter. */
const TARGET_MAX = 253;
const LOCATION_MAX = 1_000;

/** GET /v3/path[?orgId=]: the caller's paths (of that organization). */
export function pathList(request: RouteRequest): SimAnswer {
  const selected = selectByOrganization(request);
  if ('kind' in selected) return selected;
  return ok(selected.paths.map(pathJson));
}

/** GET /v3/path/status[?orgId=]: `{pathId, status}` of each of the caller's paths. */
export function pathStatusList(request: RouteRequest): SimAnswer {
  const selected = selectByOrganization(request);
  if ('kind' in selected) return selected;
  return ok(selected.paths.map((path) => statusJson(path, request)));
}

/** GET /v3/path/{id}/status */
export function pathStatusOne(request: RouteRequest): SimAnswer {
  const found = visiblePath(request, []);
  return 'kind' in found ? found : ok(statusJson(found.path, request));
}

/** POST /v3/path `{sourceAppliance, target, orgId, pathName?}` -> 201 with the record. */
export function pathCreate({ body, caller, context }: RouteRequest): SimAnswer {
  const parsed = jsonObject(body);
  if ('kind' in parsed) return parsed;
  const input = parsed.object;
  if ('targetLocation' in input)
    return refuse(SIM_ERRORS.badRequest, 'targetLocation cannot be set when a path is created');
  const { orgId, sourceAppliance, target, pathName } = input;
  if (typeof orgId !== 'number' || !Number.isSafeInteger(orgId))
    return refuse(SIM_ERRORS.badRequest, 'orgId is required (an integer)');
  if (!context.callers.exists(orgId)) return refuse(SIM_ERRORS.badRequest, `Unknown organization: ${orgId}`);
  if (!sees(caller, orgId)) return refuse(SIM_ERRORS.accessDenied);
  if (typeof sourceAppliance !== 'string' || sourceAppliance === '')
    return refuse(SIM_ERRORS.badRequest, 'sourceAppliance is required (the Monitoring Point name)');
  if (typeof target !== 'string' || !/^[^\s\p{Cc}]{1,253}$/u.test(target))
    return refuse(
      SIM_ERRORS.badRequest,
      `target is required (a host name or address of at most ${TARGET_MAX} characters)`,
    );
  const source = context.registry.byName(sourceAppliance, orgId);
  if (source === undefined)
    return refuse(SIM_ERRORS.badRequest, `Unknown sourceAppliance in organization ${orgId}: ${shown(sourceAppliance)}`);
  // A default name is cut to the limit: a long target is no reason to refuse a body that names none.
  const name = pathName ?? [...`${source.name} -> ${target}`].slice(0, PATH_NAME_MAX).join('');
  if (typeof name !== 'string' || name === '' || [...name].length > PATH_NAME_MAX)
    return refuse(SIM_ERRORS.badRequest, `pathName must be 1 to ${PATH_NAME_MAX} characters`);
  const far = context.registry.byTarget(target);
  const outcome = context.paths.create({
    pathName: name,
    sourceAppliance: source.name,
    sourceId: source.id,
    target,
    orgId,
    instrumentation: far !== undefined && far.id !== source.id ? 'TWO_WAY' : 'ONE_WAY',
    createdAt: context.now,
  });
  if ('existing' in outcome)
    return refuse(
      SIM_ERRORS.badRequest,
      `A path from ${shown(source.name)} to ${shown(target)} already exists (id ${outcome.existing.id})`,
    );
  return ok(pathJson(outcome.created), 201);
}

/** PUT /v3/path/{id}/targetLocation `{"targetLocation": "..."}` -> 200 with the record. */
export function pathTargetLocation(request: RouteRequest): SimAnswer {
  const found = visiblePath(request, []);
  if ('kind' in found) return found;
  const parsed = jsonObject(request.body);
  if ('kind' in parsed) return parsed;
  const location = parsed.object.targetLocation;
  if (typeof location !== 'string' || location.length > LOCATION_MAX)
    return refuse(SIM_ERRORS.badRequest, `targetLocation is required (text of at most ${LOCATION_MAX} characters)`);
  request.context.paths.setTargetLocation(found.path.id, location);
  return ok(pathJson(found.path));
}

/** DELETE /v3/path/{id} -> 200 with the record it removed. */
export function pathDelete(request: RouteRequest): SimAnswer {
  const found = visiblePath(request, []);
  if ('kind' in found) return found;
  request.context.paths.delete(found.path.id);
  return ok(pathJson(found.path));
}

/** The `{id}` path of the route, if the caller may see it: 400 for an id that is no integer, 404 otherwise. */
export function visiblePath(
  { params, search, caller, context }: RouteRequest,
  allowedQuery: readonly string[],
): { path: PathRecord } | SimAnswer {
  const id = integerId(params[0]);
  if (id === undefined) return refuse(SIM_ERRORS.badRequest, 'The path id must be an integer');
  const problem = queryProblem(search, allowedQuery);
  if (problem !== undefined) return refuse(SIM_ERRORS.badRequest, problem);
  const path = context.paths.get(id);
  if (path === undefined || !sees(caller, path.orgId)) return refuse(SIM_ERRORS.notFound);
  return { path };
}

/** The caller's paths, of `?orgId=` when given (403 for an organization it may not see). */
export function selectByOrganization(
  { search, caller, context }: RouteRequest,
  extraQuery: readonly string[] = [],
): { paths: PathRecord[] } | SimAnswer {
  const problem = queryProblem(search, ['orgId', ...extraQuery]);
  if (problem !== undefined) return refuse(SIM_ERRORS.badRequest, problem);
  const orgText = search.get('orgId');
  const orgId = integerId(orgText);
  if (orgText !== null && orgId === undefined) return refuse(SIM_ERRORS.badRequest, 'orgId must be an integer');
  if (orgId !== undefined && !context.callers.mayUseOrganization(caller, orgId)) return refuse(SIM_ERRORS.accessDenied);
  return {
    paths: context.paths.list().filter((p) => sees(caller, p.orgId) && (orgId === undefined || p.orgId === orgId)),
  };
}

function statusJson(path: PathRecord, { context }: RouteRequest): { pathId: number; status: string } {
  const spans = context.registry.availableSpans(path.sourceId);
  return { pathId: path.id, status: pathStatus(path, spans, context.pathData, context.now) };
}
