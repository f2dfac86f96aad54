import { pathDataRecord, type SecondsRange } from './path-data.js';
import type { PathRecord } from './path-registry.js';
import { selectByOrganization, visiblePath } from './path-routes.js';
import { integerId, ok, refuse, type RouteRequest, type SimAnswer } from './route-types.js';
import { SIM_ERRORS } from './service-wire.js';

/**
 * Path data: one path's record, or many paginated. Documented: without from and to, the last
 * hour; at most 20 path-days per request (per page), where path-days = paths on the page x
 * (to - from) / 86 400 s, fractional; beyond it 400 (model). Unknown pathIds are left out.
 */

const PATH_DAYS_MAX = 20;
const HOUR_S = 3_600;
/** Far enough: Unix seconds past the year 5000 are a mistake, not a range. */
const SECONDS_MAX = 100_000_000_000;

/** GET /v3/path/{id}/data[?from=&to=] */
export function pathDataOne(request: RouteRequest): SimAnswer {
  const found = visiblePath(request, ['from', 'to']);
  if ('kind' in found) return found;
  const range = timeRange(request);
  if (typeof range === 'string') return refuse(SIM_ERRORS.badRequest, range);
  return ok(recordOf(found.path, range, request));
}

/** GET /v3/path/data[?orgId=][&pathIds=1,2][&from=&to=][&limit=&page=] */
export function pathDataBulk(request: RouteRequest): SimAnswer {
  const selected = selectByOrganization(request, ['pathIds', 'from', 'to', 'limit', 'page']);
  if ('kind' in selected) return selected;
  const { search } = request;
  const range = timeRange(request);
  if (typeof range === 'string') return refuse(SIM_ERRORS.badRequest, range);
  const limitText = search.get('limit');
  const pageText = search.get('page');
  const limit = integerId(limitText);
  const page = integerId(pageText) ?? 1;
  if (
    (limitText !== null && (limit === undefined || limit < 1)) ||
    (pageText !== null && (page < 1 || integerId(pageText) === undefined))
  )
    return refuse(SIM_ERRORS.badRequest, 'limit and page must be positive integers');
  let paths = selected.paths;
  const idsText = search.get('pathIds');
  if (idsText !== null) {
    const ids = idsText.split(',').map((t) => integerId(t.trim()));
    if (ids.some((id) => id === undefined))
      return refuse(SIM_ERRORS.badRequest, 'pathIds must be integers separated by commas');
    const wanted = new Set(ids);
    paths = paths.filter((p) => wanted.has(p.id));
  }
  // Without a limit one page holds every path asked for.
  const size = limit ?? Math.max(1, paths.length);
  const onPage = paths.slice((page - 1) * size, page * size);
  const pathDays = (onPage.length * (range.to - range.from)) / 86_400;
  if (pathDays > PATH_DAYS_MAX)
    return refuse(
      SIM_ERRORS.badRequest,
      `At most ${PATH_DAYS_MAX} path-days per request: ${onPage.length} paths x ${(range.to - range.from) / 86_400} days is ${pathDays}`,
    );
  return ok(onPage.map((path) => recordOf(path, range, request)));
}

function recordOf(path: PathRecord, range: SecondsRange, { context }: RouteRequest) {
  return pathDataRecord(path, context.registry.availableSpans(path.sourceId), context.pathData, range, context.now);
}

/** from and to (Unix s, both optional: the last hour, or an hour on the side given); a sentence when wrong. */
function timeRange({ search, context }: RouteRequest): SecondsRange | string {
  const fromText = search.get('from');
  const toText = search.get('to');
  const from = integerId(fromText);
  const to = integerId(toText);
  if (
    (fromText !== null && (from === undefined || from > SECONDS_MAX)) ||
    (toText !== null && (to === undefined || to > SECONDS_MAX))
  )
    return 'from and to must be Unix times in seconds';
  const now = Math.floor(context.now / 1000);
  const end = to ?? (from === undefined ? now : Math.max(now, from));
  const start = from ?? Math.max(0, end - HOUR_S);
  if (start > end) return 'from must not be after to';
  return { from: start, to: end };
}
