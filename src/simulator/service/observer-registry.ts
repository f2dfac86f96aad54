import { sees, type Caller } from './service-callers.js';

/**
 * The event servers each caller configured with POST /v3/observer (docs/service-model.md,
 * "Observers and events"). A caller is its label; a configuration is identified by its exact URL
 * within the caller's. Each configuration carries an id that a DELETE and a new POST change, so a
 * delivery still under way for a removed configuration cannot touch its successor.
 */

export const OBSERVER_KINDS = [
  'testEvents',
  'seqEvents',
  'sqaEvents',
  'webAlertEvents',
  'networkChangeEvents',
] as const;
export type ObserverKind = (typeof OBSERVER_KINDS)[number];

/** A configuration as POST answers it and GET lists it: the documented Observer fields, no more. */
export type ObserverJson = { url: string } & Record<ObserverKind, boolean> & { blacklisted: boolean };

/** What a POST asks for: a URL and its kinds (a flag left out is false). */
export type ObserverInput = { url: string } & Record<ObserverKind, boolean>;

export interface ObserverRecord {
  id: number;
  ownerLabel: string;
  /** The organizations the owner sees when it posted: the events it may receive. */
  ownerOrgIds: Caller['orgIds'];
  config: ObserverJson;
  /** Events in a row without an answer; BLACKLIST_AFTER of them blacklist the configuration. */
  unanswered: number;
}

/** Documented default: 10 consecutive events without a response. */
const BLACKLIST_AFTER = 10;
/** At most one configuration per kind is useful; a few more (all flags false) are tolerated, not unbounded. */
const MAX_OBSERVERS_PER_CALLER = 16;

export type PostOutcome =
  { stored: ObserverJson } | { conflict: { kind: ObserverKind; url: string } } | { tooMany: number };

export class ObserverRegistry {
  readonly #records: ObserverRecord[] = [];
  #nextId = 1;

  /** Stores or replaces (same URL: new flags, same `blacklisted` and delivery state) the caller's configuration. */
  post(owner: Caller, input: ObserverInput): PostOutcome {
    const own = this.#records.filter((r) => r.ownerLabel === owner.label);
    const same = own.find((r) => r.config.url === input.url);
    for (const kind of OBSERVER_KINDS) {
      if (!input[kind]) continue;
      // A blacklisted configuration still holds its kinds: only a DELETE frees them.
      const other = own.find((r) => r !== same && r.config[kind]);
      if (other !== undefined) return { conflict: { kind, url: other.config.url } };
    }
    if (same !== undefined) {
      same.config = { ...input, blacklisted: same.config.blacklisted };
      same.ownerOrgIds = owner.orgIds;
      return { stored: { ...same.config } };
    }
    if (own.length >= MAX_OBSERVERS_PER_CALLER) return { tooMany: MAX_OBSERVERS_PER_CALLER };
    const record: ObserverRecord = {
      id: this.#nextId++,
      ownerLabel: owner.label,
      ownerOrgIds: owner.orgIds,
      config: { ...input, blacklisted: false },
      unanswered: 0,
    };
    this.#records.push(record);
    return { stored: { ...record.config } };
  }

  /** The caller's configurations, oldest first. */
  list(ownerLabel: string): ObserverJson[] {
    return this.#records.filter((r) => r.ownerLabel === ownerLabel).map((r) => ({ ...r.config }));
  }

  /** Every user's configurations in the admin's organizations (the simulator's "organization hierarchy"). */
  listAll(admin: Caller): ObserverJson[] {
    return this.#records.filter((r) => sharesOrganization(admin, r.ownerOrgIds)).map((r) => ({ ...r.config }));
  }

  /** Every caller's, oldest first (for tests and the control port). */
  all(): ObserverJson[] {
    return this.#records.map((r) => ({ ...r.config }));
  }

  /** Removes every configuration of the caller; how many there were. */
  deleteAll(ownerLabel: string): number {
    const before = this.#records.length;
    for (let i = this.#records.length - 1; i >= 0; i--) {
      if (this.#records[i]?.ownerLabel === ownerLabel) this.#records.splice(i, 1);
    }
    return before - this.#records.length;
  }

  /** The configurations that get an event of this kind about organization `orgId` now. */
  recipients(kind: ObserverKind, orgId: number): ObserverRecord[] {
    return this.#records.filter(
      (r) => r.config[kind] && !r.config.blacklisted && sees({ orgIds: r.ownerOrgIds }, orgId),
    );
  }

  /** The record with this id, while it is configured (blacklisted or not). */
  byId(id: number): ObserverRecord | undefined {
    return this.#records.find((r) => r.id === id);
  }

  /** The live record with this id, if it is still configured and not blacklisted. */
  live(id: number): ObserverRecord | undefined {
    const record = this.byId(id);
    return record === undefined || record.config.blacklisted ? undefined : record;
  }

  /** Counts one delivery's outcome; true when this one blacklisted the configuration. */
  recordOutcome(id: number, answered: boolean): boolean {
    const record = this.live(id);
    if (record === undefined) return false;
    if (answered) {
      record.unanswered = 0;
      return false;
    }
    record.unanswered += 1;
    if (record.unanswered < BLACKLIST_AFTER) return false;
    record.config.blacklisted = true;
    return true;
  }

  clear(): void {
    this.#records.length = 0;
  }
}

function sharesOrganization(admin: Pick<Caller, 'orgIds'>, orgIds: Caller['orgIds']): boolean {
  if (admin.orgIds === 'all' || orgIds === 'all') return true;
  return orgIds.some((id) => sees(admin, id));
}
