import { pickAppliance } from './appliance-match.js';
import type { Appliance } from './data-api-model.js';
import { failureStatus, failureText } from './failure-kind.js';
import type { PathCatalogue } from './path-catalogue.js';
import { NO_ORGANIZATION, pathName, type WantedPath } from './path-outcome.js';
import type { WatchState } from './watch-state.js';

/**
 * What `plan` shows of an MP's paths: which would be created, which exist, which would get their
 * location. Reads the service only (GET); a failure is said per path, never thrown.
 */

export const PathPlanAction = {
  Create: 'create',
  Exists: 'exists',
  SetLocation: 'set-location',
  /** The service could not say (no organization, a failure): nothing is known to be done. */
  Unknown: 'unknown',
} as const;
export type PathPlanAction = (typeof PathPlanAction)[keyof typeof PathPlanAction];

export interface PathPlanEntry {
  target: string;
  action: PathPlanAction;
  id?: number | undefined;
  sentence: string;
}

export async function planPaths(
  state: WatchState,
  catalogue: PathCatalogue,
  hostname: string,
  wanted: readonly WantedPath[],
  options: { signal?: AbortSignal | undefined } = {},
): Promise<PathPlanEntry[]> {
  let appliance: Appliance | undefined;
  try {
    appliance = await findAppliance(state, hostname, options.signal);
  } catch (error) {
    if (options.signal?.aborted === true) throw options.signal.reason;
    return wanted.map((w) => unknown(w.target, `could not be checked: ${failureText(error)}`));
  }
  const source = appliance?.name ?? hostname;
  const orgId = appliance?.orgId ?? state.organizationOf(hostname) ?? (await state.soleOrganization());
  if (orgId === undefined) return wanted.map((w) => unknown(w.target, NO_ORGANIZATION));
  return Promise.all(
    wanted.map(async (w): Promise<PathPlanEntry> => {
      try {
        const path = await catalogue.find(orgId, source, w.target);
        if (path === undefined)
          return {
            target: w.target,
            action: PathPlanAction.Create,
            sentence: `${pathName(w.target)}: would be created`,
          };
        if (w.location !== undefined && path.targetLocation !== w.location)
          return {
            target: w.target,
            action: PathPlanAction.SetLocation,
            id: path.id,
            sentence: `${pathName(w.target)}: exists; its location would be set`,
          };
        return {
          target: w.target,
          action: PathPlanAction.Exists,
          id: path.id,
          sentence: `${pathName(w.target)}: exists`,
        };
      } catch (error) {
        if (options.signal?.aborted === true) throw options.signal.reason;
        return unknown(w.target, `could not be checked: ${failureText(error)}`);
      }
    }),
  );
}

function unknown(target: string, why: string): PathPlanEntry {
  return { target, action: PathPlanAction.Unknown, sentence: `${pathName(target)} ${why}` };
}

/** The MP's record, asked by hostname (or, if the service refuses that, by its organization or all). */
async function findAppliance(
  state: WatchState,
  hostname: string,
  signal?: AbortSignal,
): Promise<Appliance | undefined> {
  const known = state.known.get(hostname.toLowerCase());
  if (known?.id !== undefined) return { id: known.id, name: known.name, orgId: known.orgId, connectionStatus: '' };
  if (!state.refused.has('hostname')) {
    try {
      const found = pickAppliance(await state.client.listAppliances({ hostname }, { signal }), hostname);
      if (found !== undefined) state.learn(hostname, found);
      return found;
    } catch (error) {
      if (failureStatus(error) !== 400) throw error;
      state.refused.add('hostname');
    }
  }
  const orgId = state.organizationOf(hostname) ?? (await state.soleOrganization());
  const listed = await state.client.listAppliances(orgId === undefined ? {} : { orgId }, { signal });
  const found = pickAppliance(listed, hostname);
  if (found !== undefined) state.learn(hostname, found, orgId);
  return found;
}
