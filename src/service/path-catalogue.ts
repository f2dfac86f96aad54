import type { DataApi } from './data-api-client.js';
import type { NetworkPath } from './data-api-model.js';
import { statusText } from './connection-outcome.js';
import { failureStatus } from './failure-kind.js';

/**
 * The paths of each organization as the watch last listed them, shared by every MP of the watch:
 * one `GET /v3/path?orgId=` answers every MP's lookups for a while (PATH_LIST_FRESH_MS), and a
 * path this watch created is added to it. A list that is older than that can miss a path another
 * caller created since; the service's 400 for a duplicate is then read as "exists" and the
 * organization listed again, so the answer stays right, and a path is never created twice.
 * Creation is deduplicated per (organization, MP, target): two waiters asking at once share one POST.
 */

const PATH_LIST_FRESH_MS = 30_000;

export type Ensured = { path: NetworkPath; created: boolean } | { failure: unknown };

export interface PathCatalogue {
  /** The path from `source` (the MP's name, any case) to `target`, from a list at most `maxAgeMs` old. */
  find(orgId: number, source: string, target: string, maxAgeMs?: number): Promise<NetworkPath | undefined>;
  /** Finds, else creates, the path; never POSTs twice for one (organization, MP, target). */
  ensure(orgId: number, source: string, target: string, signal?: AbortSignal): Promise<Ensured>;
  /** Records what a PUT answered (the path's new location). */
  update(orgId: number, path: NetworkPath): void;
}

interface OrgPaths {
  listedAt: number;
  paths: Map<string, NetworkPath>;
}

const keyOf = (source: string, target: string): string => `${source.toLowerCase()}\n${target.toLowerCase()}`;

export function createPathCatalogue(client: DataApi): PathCatalogue {
  const lists = new Map<number, OrgPaths>();
  const listing = new Map<number, { startedAt: number; done: Promise<OrgPaths> }>();
  /** Creations under way, shared by every caller of the same (organization, MP, target). */
  const ensuring = new Map<string, { done: Promise<Ensured>; callers: number; controller: AbortController }>();

  function list(orgId: number, maxAgeMs: number): Promise<OrgPaths> {
    const now = Date.now();
    const have = lists.get(orgId);
    if (have !== undefined && now - have.listedAt <= maxAgeMs) return Promise.resolve(have);
    const running = listing.get(orgId);
    if (running !== undefined && now - running.startedAt <= maxAgeMs) return running.done;
    const startedAt = now;
    const done = client.listPaths(orgId, { priority: 'high' }).then((paths) => {
      const fresh = { listedAt: startedAt, paths: new Map(paths.map((p) => [keyOf(p.sourceAppliance, p.target), p])) };
      // Paths this watch created after the list was asked for are kept.
      for (const [key, path] of lists.get(orgId)?.paths ?? []) if (!fresh.paths.has(key)) fresh.paths.set(key, path);
      lists.set(orgId, fresh);
      return fresh;
    });
    const entry = { startedAt, done };
    listing.set(orgId, entry);
    const forget = () => {
      if (listing.get(orgId) === entry) listing.delete(orgId);
    };
    done.then(forget, forget);
    return done;
  }

  async function find(orgId: number, source: string, target: string, maxAgeMs = PATH_LIST_FRESH_MS) {
    return (await list(orgId, maxAgeMs)).paths.get(keyOf(source, target));
  }

  async function create(orgId: number, source: string, target: string, signal?: AbortSignal): Promise<Ensured> {
    try {
      const found = await find(orgId, source, target);
      if (found !== undefined) return { path: found, created: false };
      let failure: unknown;
      /** The service answered 2xx: the path was made, whatever the body said. */
      let made = false;
      try {
        const path = await client.createPath({ sourceAppliance: source, target, orgId }, { signal });
        if (keyOf(path.sourceAppliance, path.target) === keyOf(source, target)) {
          lists.get(orgId)?.paths.set(keyOf(source, target), path);
          return { path, created: true };
        }
        made = true;
        failure = new Error(
          `the service answered the creation with another path (from ${statusText(path.sourceAppliance)} to ${statusText(path.target)})`,
        );
      } catch (error) {
        if (signal?.aborted === true) throw error;
        const status = failureStatus(error);
        made = status !== undefined && status >= 200 && status < 300;
        if (status !== undefined && status !== 400 && !made) return { failure: error };
        failure = error;
      }
      // A 400 for a duplicate (another caller created it since our list), a POST whose answer
      // was lost, or a 2xx that is not the path asked for (garbage, another record): whether it
      // exists now is what a fresh list says, never a second POST.
      const again = await find(orgId, source, target, 0);
      return again === undefined ? { failure } : { path: again, created: made };
    } catch (error) {
      if (signal?.aborted === true) throw error;
      return { failure: error };
    }
  }

  /**
   * One caller's share of a creation: it leaves when its own signal ends (its wait ran out, or the
   * run stops), and the creation is abandoned only once every caller has left.
   */
  function joined(
    entry: { done: Promise<Ensured>; callers: number; controller: AbortController },
    signal: AbortSignal | undefined,
  ): Promise<Ensured> {
    entry.callers += 1;
    return new Promise<Ensured>((resolve, reject) => {
      const leave = () => {
        signal?.removeEventListener('abort', onAbort);
        entry.callers -= 1;
      };
      const onAbort = () => {
        leave();
        if (entry.callers === 0) entry.controller.abort(signal?.reason);
        reject(signal?.reason as Error);
      };
      if (signal?.aborted === true) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      entry.done.then(
        (ensured) => {
          leave();
          resolve(ensured);
        },
        (error: unknown) => {
          leave();
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  return {
    find,
    ensure(orgId, source, target, signal) {
      const key = `${orgId}\n${keyOf(source, target)}`;
      let entry = ensuring.get(key);
      if (entry === undefined) {
        const controller = new AbortController();
        const created = { done: create(orgId, source, target, controller.signal), callers: 0, controller };
        ensuring.set(key, created);
        // Once settled, a later call finds the path in the list (or tries again after a failure).
        const forget = () => {
          if (ensuring.get(key) === created) ensuring.delete(key);
        };
        created.done.then(forget, forget);
        entry = created;
      }
      return joined(entry, signal);
    },
    update(orgId, path) {
      lists.get(orgId)?.paths.set(keyOf(path.sourceAppliance, path.target), path);
    },
  };
}
