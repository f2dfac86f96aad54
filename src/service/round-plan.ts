import type { WatchState } from './watch-state.js';

/**
 * Which requests one round sends for the MPs waiting (docs/service-model.md, "Fleet rounds"):
 * - per organization, one `GET /v3/appliance?orgId=` for all its MPs; `GET /v3/appliance/{id}`
 *   when it waits for one MP whose id is known;
 * - an MP whose organization is not known (its record did not say it, agent.yaml's
 *   service.org_id is not set): `GET /v3/appliance?hostname=` when it is the only such MP (its
 *   id is then known for the next rounds); with several, the token's only organization
 *   (GET /v3/organization, once per watch) or, when it sees several, one list of every MP.
 * A query the service refused (400) is not planned again.
 */

export type RoundQuery =
  | { kind: 'id'; id: number; hostname: string }
  | { kind: 'org'; orgId: number }
  | { kind: 'hostname'; hostname: string }
  | { kind: 'all' };

export interface RoundGroup {
  query: RoundQuery;
  /** The MPs the answer is for. */
  hostnames: string[];
}

/** `signal` ends the wait for the token's only organization (the round's MPs all left); planRound then rejects with its reason. */
export async function planRound(
  state: WatchState,
  hostnames: readonly string[],
  signal?: AbortSignal,
): Promise<RoundGroup[]> {
  const unique = [...new Map(hostnames.map((h) => [h.toLowerCase(), h])).values()];
  const byOrg = new Map<number, string[]>();
  const unplaced: string[] = [];
  const byOrgAllowed = !state.refused.has('orgId');
  for (const hostname of unique) {
    const orgId = state.organizationOf(hostname);
    if (orgId !== undefined && byOrgAllowed) byOrg.set(orgId, [...(byOrg.get(orgId) ?? []), hostname]);
    else unplaced.push(hostname);
  }
  const groups: RoundGroup[] = [];
  const [lone] = unplaced;
  const loneQuery = unplaced.length === 1 && lone !== undefined ? loneQueryOf(state, lone) : undefined;
  if (loneQuery !== undefined && lone !== undefined) {
    groups.push({ query: loneQuery, hostnames: [lone] });
  } else if (unplaced.length > 0) {
    const sole = byOrgAllowed ? await state.soleOrganization(signal) : undefined;
    if (sole === undefined) groups.push({ query: { kind: 'all' }, hostnames: unplaced });
    else byOrg.set(sole, [...(byOrg.get(sole) ?? []), ...unplaced]);
  }
  for (const [orgId, members] of byOrg) {
    const [only] = members;
    const query = members.length === 1 && only !== undefined ? single(state, only) : undefined;
    groups.push({ query: query ?? { kind: 'org', orgId }, hostnames: members });
  }
  return groups;
}

function single(state: WatchState, hostname: string): RoundQuery | undefined {
  const id = state.refused.has('id') ? undefined : state.known.get(hostname.toLowerCase())?.id;
  return id === undefined ? undefined : { kind: 'id', id, hostname };
}

function loneQueryOf(state: WatchState, hostname: string): RoundQuery | undefined {
  return single(state, hostname) ?? (state.refused.has('hostname') ? undefined : { kind: 'hostname', hostname });
}
