import { OBSERVER_KINDS, type ObserverInput } from './observer-registry.js';
import { jsonObject, ok, queryProblem, refuse, type RouteRequest, type SimAnswer } from './route-types.js';
import { SIM_ERRORS } from './service-wire.js';

/**
 * `/v3/observer` (docs/service-model.md, "Observers and events"): POST stores or replaces one of
 * the caller's event servers, GET lists the caller's (an Organization Admin: every user's with
 * `allUsers=true`), DELETE removes all of the caller's. Every answer is 200, as documented.
 */

/** Longer URLs are refused: a receiver's address with a secret path segment is far shorter. */
const URL_MAX = 2_048;

/** POST /v3/observer `{url, testEvents, seqEvents, sqaEvents, webAlertEvents, networkChangeEvents}`. */
export function observerPost({ body, search, caller, context }: RouteRequest): SimAnswer {
  const problem = queryProblem(search, []);
  if (problem !== undefined) return refuse(SIM_ERRORS.badRequest, problem);
  const parsed = jsonObject(body);
  if ('kind' in parsed) return parsed;
  const input = observerInput(parsed.object);
  if (typeof input === 'string') return refuse(SIM_ERRORS.badRequest, input);
  const outcome = context.observers.post(caller, input);
  if ('conflict' in outcome)
    return refuse(SIM_ERRORS.badRequest, `${outcome.conflict.kind} already goes to ${outcome.conflict.url}`);
  if ('tooMany' in outcome)
    return refuse(SIM_ERRORS.badRequest, `A user has at most ${outcome.tooMany} observer configurations`);
  return ok(outcome.stored);
}

/** GET /v3/observer[?allUsers=true|false] */
export function observerList({ search, caller, context }: RouteRequest): SimAnswer {
  const problem = queryProblem(search, ['allUsers']);
  if (problem !== undefined) return refuse(SIM_ERRORS.badRequest, problem);
  const allUsers = search.get('allUsers');
  if (allUsers !== null && allUsers !== 'true' && allUsers !== 'false')
    return refuse(SIM_ERRORS.badRequest, 'allUsers must be true or false');
  if (allUsers === 'true') {
    if (!caller.orgAdmin) return refuse(SIM_ERRORS.accessDenied);
    return ok(context.observers.listAll(caller));
  }
  return ok(context.observers.list(caller.label));
}

/** DELETE /v3/observer: every configuration of the caller; answers the caller's list as it now is (empty). */
export function observerDelete({ search, caller, context }: RouteRequest): SimAnswer {
  const problem = queryProblem(search, []);
  if (problem !== undefined) return refuse(SIM_ERRORS.badRequest, problem);
  context.observers.deleteAll(caller.label);
  return ok(context.observers.list(caller.label));
}

/** The body's URL and flags, or the sentence for the 400. Other keys (`blacklisted` included) are ignored. */
function observerInput(object: Record<string, unknown>): ObserverInput | string {
  const { url } = object;
  if (typeof url !== 'string' || url === '') return 'url is required (the address of the server that receives events)';
  if (url.length > URL_MAX) return `url must be at most ${URL_MAX} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f-\u009f]/.test(url)) return 'url must not contain spaces or control characters';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'url must be an absolute http or https URL';
  const input: ObserverInput = {
    url,
    testEvents: false,
    seqEvents: false,
    sqaEvents: false,
    webAlertEvents: false,
    networkChangeEvents: false,
  };
  for (const kind of OBSERVER_KINDS) {
    const flag = object[kind];
    if (flag === undefined) continue;
    if (typeof flag !== 'boolean') return `${kind} must be true or false`;
    input[kind] = flag;
  }
  return input;
}
