import { ErrorCode, isMpprovError } from '../core/errors.js';
import type { DataApi } from './data-api-client.js';
import type { Appliance } from './data-api-model.js';

/**
 * What one watch (a run, or the agent across its jobs) has learnt about the service, shared by its
 * connection rounds and its path work: where each MP lives, which queries the service refuses,
 * and the organization the token sees when it sees only one. Learnt once, kept for the watch.
 */

export interface KnownAppliance {
  /** Undefined once GET /v3/appliance/{id} no longer found it. */
  id: number | undefined;
  /** The MP's `name` in the service: what paths name as their sourceAppliance. */
  name: string;
  /** Its record's `orgId`, else the organization it was listed in. */
  orgId?: number | undefined;
}

export interface WatchState {
  readonly client: DataApi;
  /** `service.org_id`: the organization of MPs whose records do not say theirs. */
  readonly configuredOrgId: number | undefined;
  /** By lower-case hostname. */
  readonly known: Map<string, KnownAppliance>;
  /** Queries the service refused (400 to a parameter; a GET /v3/appliance/{id} that did not find a listed MP): not sent again in this watch. */
  readonly refused: Set<'hostname' | 'orgId' | 'id'>;
  /**
   * The only organization the token sees (GET /v3/organization, asked once); undefined when none
   * or several. With a signal, rejects with its reason when it aborts first: the one request goes
   * on for whoever asks next, but a wait that ran out does not wait for it.
   */
  soleOrganization(signal?: AbortSignal): Promise<number | undefined>;
  /** Remembers an MP's record; `listedIn` is the organization a list by orgId was asked for. */
  learn(hostname: string, appliance: Appliance, listedIn?: number): void;
  /** Its id was not found again: asked for by list from now on (its organization is kept). */
  forget(hostname: string): void;
  /** The MP's organization: its record's, else service.org_id; the sole organization is the caller's to ask. */
  organizationOf(hostname: string): number | undefined;
}

export function createWatchState(client: DataApi, configuredOrgId: number | undefined): WatchState {
  const known = new Map<string, KnownAppliance>();
  let sole: Promise<number | undefined> | undefined;
  return {
    client,
    configuredOrgId,
    known,
    refused: new Set(),
    soleOrganization(signal) {
      sole ??= client.listOrganizations({ priority: 'high' }).then(
        (organizations) => (organizations.length === 1 ? organizations[0]?.id : undefined),
        (error: unknown) => {
          // A failure that may pass (network, 5xx, a caller's abort) is asked again next time;
          // one that will not (401, 403, 404) is remembered as "no sole organization".
          if (!isMpprovError(error) || TRANSIENT.has(error.code)) sole = undefined;
          return undefined;
        },
      );
      return signal === undefined ? sole : untilAborted(sole, signal);
    },
    learn(hostname, appliance, listedIn) {
      const key = hostname.toLowerCase();
      const before = known.get(key);
      known.set(key, {
        id: appliance.id,
        name: appliance.name,
        orgId: appliance.orgId ?? listedIn ?? before?.orgId,
      });
    },
    forget(hostname) {
      const before = known.get(hostname.toLowerCase());
      if (before !== undefined) known.set(hostname.toLowerCase(), { ...before, id: undefined });
    },
    organizationOf(hostname) {
      return known.get(hostname.toLowerCase())?.orgId ?? configuredOrgId;
    },
  };
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

const TRANSIENT: ReadonlySet<string> = new Set([
  ErrorCode.ServiceInternalError,
  ErrorCode.ServiceUnreachable,
  ErrorCode.ServiceTimeout,
  ErrorCode.ServiceRateLimited,
  ErrorCode.ServiceHttp,
]);
