import { ErrorCode, MpprovError } from '../../core/errors.js';
import { ApplianceRegistration, type ApplianceJson, type SimConnectionStatus } from './service-wire.js';

/**
 * The MPs the simulated service knows, and how their connectionStatus follows the simulated
 * devices: UNAVAILABLE from a networking restart until `reconnectMs` after the device answers
 * again, AVAILABLE after; UNAVAILABLE while its management port fails 802.1X. A status an
 * administrator set (BLOCKED, REMOVED, NEW) is not changed by device events.
 * Statuses are computed from event times when asked, so no timer runs and tests stay exact.
 */

interface ApplianceRecord {
  id: number;
  name: string;
  hostname: string;
  orgId: number;
  macAddress: string | null;
  /** Set by registration or an administrator; the status when no device event applies. */
  status: SimConnectionStatus;
  /** A restart under way (`answeredAt` unset) or its reconnect delay running. */
  outage?: { startedAt: number; answeredAt?: number };
  /** Until the next restart: the management port's 802.1X failed, the MP cannot report. */
  dot1xFailed: boolean;
}

const ADMIN_SET: ReadonlySet<SimConnectionStatus> = new Set(['BLOCKED', 'REMOVED', 'NEW']);

export class ApplianceRegistry {
  readonly #byHostname = new Map<string, ApplianceRecord>();
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
    const record: ApplianceRecord = {
      id,
      name: spec.name ?? spec.hostname,
      hostname: spec.hostname,
      orgId: spec.orgId ?? this.defaultOrgId(),
      macAddress: spec.macAddress?.toLowerCase() ?? null,
      status: spec.connectionStatus ?? 'AVAILABLE',
      dot1xFailed: false,
    };
    this.#byHostname.set(key(spec.hostname), record);
    return this.#json(record);
  }

  unregister(hostname: string): boolean {
    return this.#byHostname.delete(key(hostname));
  }

  /** An administrator's change (BLOCKED, REMOVED, ...): clears any outage in progress. */
  setStatus(hostname: string, status: SimConnectionStatus): void {
    const record = this.#get(hostname);
    record.status = status;
    delete record.outage;
    record.dot1xFailed = false;
  }

  restartStarted(hostname: string): void {
    const record = this.#get(hostname);
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
    this.#get(hostname).dot1xFailed = true;
  }

  status(hostname: string): SimConnectionStatus {
    return this.#statusOf(this.#get(hostname));
  }

  /** Every MP, in registration order, with its status now. */
  list(): ApplianceJson[] {
    return [...this.#byHostname.values()].map((record) => this.#json(record));
  }

  has(hostname: string): boolean {
    return this.#byHostname.has(key(hostname));
  }

  #get(hostname: string): ApplianceRecord {
    const record = this.#byHostname.get(key(hostname));
    if (record === undefined)
      throw new MpprovError(ErrorCode.Usage, `the simulated service has no appliance with hostname "${hostname}"`);
    return record;
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
    if (record.outage !== undefined && !ADMIN_SET.has(record.status)) record.status = this.#statusOf(record);
    delete record.outage;
  }

  #json(record: ApplianceRecord): ApplianceJson {
    return {
      id: record.id,
      name: record.name,
      hostname: record.hostname,
      orgId: record.orgId,
      macAddress: record.macAddress,
      connectionStatus: this.#statusOf(record),
    };
  }
}

/** Hostnames compare without case, as DNS names do. */
function key(hostname: string): string {
  return hostname.toLowerCase();
}
