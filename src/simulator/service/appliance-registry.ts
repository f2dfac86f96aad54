import { ErrorCode, MpprovError } from '../../core/errors.js';
import { ApplianceRegistration, type ApplianceJson, type SimConnectionStatus } from './service-wire.js';

/**
 * The MPs the simulated service knows, and how their connectionStatus follows the simulated
 * devices: UNAVAILABLE from a networking restart until `reconnectMs` after the device answers
 * again, AVAILABLE after; UNAVAILABLE while its management port fails 802.1X. A status an
 * administrator set (BLOCKED, REMOVED, NEW) is not changed by device events.
 * Statuses are computed from event times when asked, so no timer runs and tests stay exact.
 * The same events give each MP's AVAILABLE intervals, from which path data is derived.
 */

/** A span of epoch ms during which an MP was AVAILABLE; `to` undefined: still is. */
export interface AvailableSpan {
  from: number;
  to?: number;
}

interface ApplianceRecord {
  id: number;
  name: string;
  hostname: string;
  orgId: number;
  macAddress: string | null;
  resolvedIp: string;
  /** Set by registration or an administrator; the status when no device event applies. */
  status: SimConnectionStatus;
  /** Since when `status` has held (the start of an AVAILABLE span when it is AVAILABLE). */
  statusSince: number;
  /** A restart under way (`answeredAt` unset) or its reconnect delay running. */
  outage?: { startedAt: number; answeredAt?: number };
  /** Until the next restart: the management port's 802.1X failed, the MP cannot report. */
  dot1xFailed: boolean;
  /** Finished AVAILABLE spans, oldest first, at most MAX_SPANS (older data is simply gone). */
  spans: Required<AvailableSpan>[];
}

const ADMIN_SET: ReadonlySet<SimConnectionStatus> = new Set(['BLOCKED', 'REMOVED', 'NEW']);
const MAX_SPANS = 64;

export class ApplianceRegistry {
  readonly #byHostname = new Map<string, ApplianceRecord>();
  readonly #byId = new Map<number, ApplianceRecord>();
  #nextId = 3141;

  constructor(
    public reconnectMs: number,
    private readonly defaultOrgId: () => number,
    private readonly now: () => number = Date.now,
  ) {}

  register(input: ApplianceRegistration): ApplianceJson {
    const parsed = ApplianceRegistration.safeParse(input);
    if (!parsed.success) {
      throw new MpprovError(
        ErrorCode.ConfigInvalid,
        `cannot register the appliance: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    }
    const spec = parsed.data;
    const id = spec.id ?? this.#nextId++;
    const previous = this.#byHostname.get(key(spec.hostname));
    if (previous !== undefined) this.#byId.delete(previous.id);
    const record: ApplianceRecord = {
      id,
      name: spec.name ?? spec.hostname,
      hostname: spec.hostname,
      orgId: spec.orgId ?? this.defaultOrgId(),
      macAddress: spec.macAddress?.toLowerCase() ?? null,
      resolvedIp: spec.resolvedIp ?? `198.51.100.${1 + (id % 254)}`,
      status: spec.connectionStatus ?? 'AVAILABLE',
      statusSince: this.now(),
      dot1xFailed: false,
      spans: [],
    };
    this.#byHostname.set(key(spec.hostname), record);
    this.#byId.set(id, record);
    return this.#json(record);
  }

  unregister(hostname: string): boolean {
    const record = this.#byHostname.get(key(hostname));
    if (record === undefined) return false;
    this.#byId.delete(record.id);
    return this.#byHostname.delete(key(hostname));
  }

  /** An administrator's change (BLOCKED, REMOVED, ...): clears any outage in progress. */
  setStatus(hostname: string, status: SimConnectionStatus): void {
    const record = this.#get(hostname);
    this.#closeSpan(record);
    record.status = status;
    record.statusSince = this.now();
    delete record.outage;
    record.dot1xFailed = false;
  }

  restartStarted(hostname: string): void {
    const record = this.#get(hostname);
    this.#closeSpan(record);
    this.#settle(record);
    record.outage = { startedAt: this.now() };
    // A new restart may bring a working 802.1X; a failure is reported again if it persists.
    record.dot1xFailed = false;
  }

  answeringAgain(hostname: string): void {
    const record = this.#get(hostname);
    record.outage = { startedAt: record.outage?.startedAt ?? this.now(), answeredAt: this.now() };
  }

  managementDot1xFailed(hostname: string): void {
    const record = this.#get(hostname);
    this.#closeSpan(record);
    record.dot1xFailed = true;
  }

  status(hostname: string): SimConnectionStatus {
    return this.#statusOf(this.#get(hostname));
  }

  /** When the MP's status next changes by itself (its reconnect delay ends), if that is still to come. */
  nextChangeAt(hostname: string): number | undefined {
    const record = this.#byHostname.get(key(hostname));
    const answeredAt = record?.outage?.answeredAt;
    if (record === undefined || answeredAt === undefined) return undefined;
    const at = answeredAt + this.reconnectMs;
    return at > this.now() ? at : undefined;
  }

  /** Every MP, in registration order, with its status now. */
  list(): ApplianceJson[] {
    return [...this.#byHostname.values()].map((record) => this.#json(record));
  }

  has(hostname: string): boolean {
    return this.#byHostname.has(key(hostname));
  }

  byHostname(hostname: string): ApplianceJson | undefined {
    const record = this.#byHostname.get(key(hostname));
    return record === undefined ? undefined : this.#json(record);
  }

  byId(id: number): ApplianceJson | undefined {
    const record = this.#byId.get(id);
    return record === undefined ? undefined : this.#json(record);
  }

  /** The MP of organization `orgId` whose `name` is `name` (any case), as a path's sourceAppliance names it. */
  byName(name: string, orgId: number): ApplianceJson | undefined {
    const wanted = key(name);
    for (const record of this.#byHostname.values()) {
      if (record.orgId === orgId && key(record.name) === wanted) return this.#json(record);
    }
    return undefined;
  }

  /** The MP that `target` names, by name, hostname or address (any case): a dual-ended path's far end. */
  byTarget(target: string): ApplianceJson | undefined {
    const wanted = key(target);
    for (const record of this.#byHostname.values()) {
      if ([record.name, record.hostname, record.resolvedIp].some((n) => key(n) === wanted)) return this.#json(record);
    }
    return undefined;
  }

  /**
   * The spans during which the MP with this id was AVAILABLE, oldest first, the current one open
   * (or starting in the future, when its reconnect delay is still running). Empty when unknown.
   */
  availableSpans(id: number): AvailableSpan[] {
    const record = this.#byId.get(id);
    if (record === undefined) return [];
    const open = this.#openSpanStart(record);
    return open === undefined ? [...record.spans] : [...record.spans, { from: open }];
  }

  #get(hostname: string): ApplianceRecord {
    const record = this.#byHostname.get(key(hostname));
    if (record === undefined)
      throw new MpprovError(ErrorCode.Usage, `the simulated service has no appliance with hostname "${hostname}"`);
    return record;
  }

  /** When the MP's current AVAILABLE span starts (possibly after now), if it has one. */
  #openSpanStart(record: ApplianceRecord): number | undefined {
    if (ADMIN_SET.has(record.status) || record.dot1xFailed) return undefined;
    const outage = record.outage;
    if (outage === undefined) return record.status === 'AVAILABLE' ? record.statusSince : undefined;
    return outage.answeredAt === undefined ? undefined : outage.answeredAt + this.reconnectMs;
  }

  /** The MP stops being AVAILABLE now: its open span, if it has begun, is kept as a finished one. */
  #closeSpan(record: ApplianceRecord): void {
    const from = this.#openSpanStart(record);
    const now = this.now();
    if (from === undefined || from >= now) return;
    record.spans.push({ from, to: now });
    if (record.spans.length > MAX_SPANS) record.spans.splice(0, record.spans.length - MAX_SPANS);
  }

  #statusOf(record: ApplianceRecord): SimConnectionStatus {
    if (ADMIN_SET.has(record.status)) return record.status;
    if (record.dot1xFailed) return 'UNAVAILABLE';
    const outage = record.outage;
    if (outage === undefined) return record.status;
    if (outage.answeredAt === undefined || this.now() < outage.answeredAt + this.reconnectMs) return 'UNAVAILABLE';
    return 'AVAILABLE';
  }

  /** A finished outage becomes the plain status it ended in. */
  #settle(record: ApplianceRecord): void {
    if (record.outage !== undefined && !ADMIN_SET.has(record.status)) {
      record.status = this.#statusOf(record);
      record.statusSince = this.now();
    }
    delete record.outage;
  }

  #json(record: ApplianceRecord): ApplianceJson {
    return {
      id: record.id,
      name: record.name,
      hostname: record.hostname,
      orgId: record.orgId,
      macAddress: record.macAddress,
      resolvedIp: record.resolvedIp,
      connectionStatus: this.#statusOf(record),
    };
  }
}

/** Hostnames compare without case, as DNS names do. */
function key(hostname: string): string {
  return hostname.toLowerCase();
}
