import type { SimConnectionStatus, SimErrorName } from './service-wire.js';

/**
 * Faults of the simulated service, for rehearsals and tests. Each applies after the rate limit
 * (a faulty answer still counts as a request) and before anything else; `count` makes it apply
 * to that many requests only, else to every request until cleared. Revoking a token mid-run and
 * blocking an MP are actions on the handle (revokeToken, setConnectionStatus), not faults here.
 */
export interface ServiceFaultSpec {
  /** Answer with a documented error, e.g. `internal` (500) or `notAcceptable` (406). */
  error?: { name: SimErrorName; count?: number } | undefined;
  /** Every answer waits this long (a slow service). */
  latencyMs?: number | undefined;
  /** A 200 body of this many bytes, streamed, instead of the answer (a runaway service). */
  oversizedBody?: { bytes: number; count?: number } | undefined;
  /** An answer with this text instead of the model's JSON (a proxy's page, a wrong shape); status default 200. */
  rawBody?: { text: string; contentType?: string; status?: number; count?: number } | undefined;
  /**
   * The service's own words for statuses in GET /v3/appliance, e.g. `{ AVAILABLE: 'ONLINE' }`: the
   * model's set is what is documented, and a real service may say ONLINE, OFFLINE or something new.
   * Every listing until cleared; the MP's status itself is unchanged.
   */
  statusWords?: Partial<Record<SimConnectionStatus, string>> | undefined;
  /**
   * `GET /v3/appliance?hostname=` answers 400 (`Unknown query parameter: hostname`), as a service
   * without the search would: a client must then ask by `orgId` and match the name itself. Until cleared.
   */
  refuseHostnameQuery?: boolean | undefined;
}

export type ActiveFault =
  | { kind: 'error'; name: SimErrorName }
  | { kind: 'oversized-body'; bytes: number }
  | { kind: 'raw-body'; text: string; contentType: string; status: number };

export class ServiceFaults {
  #spec: ServiceFaultSpec = {};

  set(spec: ServiceFaultSpec): void {
    this.#spec = structuredClone(spec);
  }

  clear(): void {
    this.#spec = {};
  }

  get latencyMs(): number {
    return this.#spec.latencyMs ?? 0;
  }

  get refusesHostnameQuery(): boolean {
    return this.#spec.refuseHostnameQuery === true;
  }

  /** How the service words `status` in a listing. */
  statusWord(status: SimConnectionStatus): string {
    return this.#spec.statusWords?.[status] ?? status;
  }

  /** The fault shaping the next answer, if any; uses up one of its `count`. */
  take(): ActiveFault | undefined {
    const { error, oversizedBody, rawBody } = this.#spec;
    if (error !== undefined && use(error, () => delete this.#spec.error)) return { kind: 'error', name: error.name };
    if (oversizedBody !== undefined && use(oversizedBody, () => delete this.#spec.oversizedBody)) {
      return { kind: 'oversized-body', bytes: oversizedBody.bytes };
    }
    if (rawBody !== undefined && use(rawBody, () => delete this.#spec.rawBody)) {
      return {
        kind: 'raw-body',
        text: rawBody.text,
        contentType: rawBody.contentType ?? 'text/html',
        status: rawBody.status ?? 200,
      };
    }
    return undefined;
  }
}

/** True when the fault applies to this request; drops it once its count is used up. */
function use(fault: { count?: number }, drop: () => void): boolean {
  if (fault.count === undefined) return true;
  if (fault.count <= 0) {
    drop();
    return false;
  }
  fault.count -= 1;
  if (fault.count === 0) drop();
  return true;
}
