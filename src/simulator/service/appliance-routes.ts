import { integerId, ok, queryProblem, refuse, type RouteRequest, type SimAnswer } from './route-types.js';
import { sees } from './service-callers.js';
import { applianceJson, MAC_ADDRESS, organizationJson, SIM_ERRORS, type ApplianceJson } from './service-wire.js';

/** GET /v3/organization: the organizations the caller may see. */
export function organizations({ search, caller, context }: RouteRequest): SimAnswer {
  const problem = queryProblem(search, []);
  if (problem !== undefined) return refuse(SIM_ERRORS.badRequest, problem);
  return ok(context.callers.visibleOrganizations(caller).map((o) => organizationJson(o, context.shapes)));
}

/**
 * GET /v3/appliance[?orgId=][&hostname=][&mac=]: exact hostname (any case), MAC in
 * aa:bb:cc:dd:ee:ff form, an organization the caller may not see (or that does not exist) 403.
 */
export function applianceList({ search, caller, context }: RouteRequest): SimAnswer {
  if (search.has('hostname') && context.faults.refusesHostnameQuery)
    return refuse(SIM_ERRORS.badRequest, 'Unknown query parameter: hostname');
  const problem = queryProblem(search, ['orgId', 'hostname', 'mac']);
  if (problem !== undefined) return refuse(SIM_ERRORS.badRequest, problem);
  const hostname = search.get('hostname');
  const mac = search.get('mac');
  const orgText = search.get('orgId');
  const orgId = integerId(orgText);
  if (hostname === '') return refuse(SIM_ERRORS.badRequest, 'hostname must not be empty');
  if (mac !== null && !MAC_ADDRESS.test(mac)) return refuse(SIM_ERRORS.badRequest, 'mac must be aa:bb:cc:dd:ee:ff');
  if (orgText !== null && orgId === undefined) return refuse(SIM_ERRORS.badRequest, 'orgId must be an integer');
  if (orgId !== undefined && !context.callers.mayUseOrganization(caller, orgId)) return refuse(SIM_ERRORS.accessDenied);
  const listed = context.registry
    .list()
    .filter((a) => sees(caller, a.orgId))
    .filter((a) => orgId === undefined || a.orgId === orgId)
    .filter((a) => hostname === null || a.hostname.toLowerCase() === hostname.toLowerCase())
    .filter((a) => mac === null || a.macAddress === mac.toLowerCase());
  return ok(listed.map((a) => worded(a, context)));
}

/** GET /v3/appliance/{id}: one record; 404 when unknown or not the caller's (its existence is not revealed). */
export function applianceById({ params, search, caller, context }: RouteRequest): SimAnswer {
  const id = integerId(params[0]);
  if (id === undefined) return refuse(SIM_ERRORS.badRequest, 'The appliance id must be an integer');
  const problem = queryProblem(search, []);
  if (problem !== undefined) return refuse(SIM_ERRORS.badRequest, problem);
  const appliance = context.registry.byId(id);
  if (appliance === undefined || !sees(caller, appliance.orgId)) return refuse(SIM_ERRORS.notFound);
  return ok(worded(appliance, context));
}

function worded(appliance: ApplianceJson, context: RouteRequest['context']): Record<string, unknown> {
  return applianceJson(appliance, context.shapes, context.faults.statusWord(appliance.connectionStatus));
}
