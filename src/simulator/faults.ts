import { SimulatorError, SimulatorErrorCode } from './simulator-error.js';

/**
 * Fault injection: what can go wrong with a real device, on demand. One fault per string:
 *
 *   KIND[=VALUE][,times=N][@[METHOD ]PATH]
 *
 * Per request (optionally scoped to METHOD and a PATH pattern where `*` matches anything):
 *   latency=DURATION   answer DURATION late (`250ms`, `2s`)
 *   error=RATE         answer 500 to a share RATE of requests (`1`, `0.3`, `30%`)
 *   drop=RATE          destroy the connection without answering, for a share RATE of requests
 *   throttle=DURATION  answer 429 with Retry-After of DURATION (whole seconds, rounded up)
 *   huge-body=SIZE     answer 200 with a JSON body of SIZE bytes (`64MiB`), streamed without a length
 * Per networking restart or reboot (global only):
 *   restart-delay=DURATION  the outage lasts DURATION instead of the announced restart time
 *   no-return          the device never listens again (until reset)
 *   pending-stuck      pending configuration does not become active
 *   drop-field=FIELD   re-activated stanzas come back without FIELD (a wrong active config)
 *   new-cert           the device presents a new self-issued TLS certificate
 * Per answer (global only):
 *   clock-offset=OFFSET  the HTTP Date header is off by OFFSET (`-2h`, `10m`, `3d`): a device whose clock is wrong
 * `times=N` lets the fault fire N times, then it expires.
 */

export const FAULT_KINDS = [
  'latency',
  'error',
  'drop',
  'throttle',
  'huge-body',
  'restart-delay',
  'no-return',
  'pending-stuck',
  'drop-field',
  'new-cert',
  'clock-offset',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

const REQUEST_FAULTS: readonly FaultKind[] = ['latency', 'error', 'drop', 'throttle', 'huge-body'];
export type RestartFaultKind = Exclude<
  FaultKind,
  'latency' | 'error' | 'drop' | 'throttle' | 'huge-body' | 'clock-offset'
>;

export interface FaultSpec {
  kind: FaultKind;
  /** ms for latency, throttle and restart-delay; 0..1 for error and drop; bytes for huge-body; a field name for drop-field. */
  value?: number | string | undefined;
  times?: number | undefined;
  method?: string | undefined;
  path?: string | undefined;
}

/** A fault string that does not parse; a SimulatorError, so `mpprov simulate` treats it as usage. */
export class FaultSyntaxError extends SimulatorError {
  constructor(message: string) {
    super(SimulatorErrorCode.FaultSyntax, message);
    this.name = 'FaultSyntaxError';
  }
}

const NEEDS_VALUE: Record<FaultKind, 'duration' | 'rate' | 'size' | 'field' | 'offset' | 'none'> = {
  latency: 'duration',
  error: 'rate',
  drop: 'rate',
  throttle: 'duration',
  'huge-body': 'size',
  'restart-delay': 'duration',
  'no-return': 'none',
  'pending-stuck': 'none',
  'drop-field': 'field',
  'new-cert': 'none',
  'clock-offset': 'offset',
};

export function parseFault(text: string): FaultSpec {
  const bad = (why: string) =>
    new FaultSyntaxError(`Fault "${text}": ${why}. Syntax: KIND[=VALUE][,times=N][@[METHOD ]PATH].`);
  const at = text.indexOf('@');
  const head = (at < 0 ? text : text.slice(0, at)).trim();
  const scope = at < 0 ? undefined : text.slice(at + 1).trim();
  const [kindPart = '', ...options] = head.split(',').map((p) => p.trim());
  const eq = kindPart.indexOf('=');
  const kind = (eq < 0 ? kindPart : kindPart.slice(0, eq)) as FaultKind;
  const rawValue = eq < 0 ? undefined : kindPart.slice(eq + 1);
  if (!FAULT_KINDS.includes(kind)) throw bad(`unknown kind "${kind}" (known: ${FAULT_KINDS.join(', ')})`);
  const spec: FaultSpec = { kind };
  const needs = NEEDS_VALUE[kind];
  if (needs === 'none' && rawValue !== undefined) throw bad(`"${kind}" takes no value`);
  if (needs !== 'none' && rawValue === undefined) throw bad(`"${kind}" needs a value`);
  if (rawValue !== undefined) {
    if (needs === 'duration')
      spec.value = parseDuration(rawValue) ?? failWith(bad(`"${rawValue}" is not a duration such as 250ms or 2s`));
    else if (needs === 'rate')
      spec.value = parseRate(rawValue) ?? failWith(bad(`"${rawValue}" is not a rate from 0 to 1 or a percentage`));
    else if (needs === 'offset')
      spec.value = parseOffset(rawValue) ?? failWith(bad(`"${rawValue}" is not an offset such as -2h, 10m or 3d`));
    else if (needs === 'size')
      spec.value = parseSize(rawValue) ?? failWith(bad(`"${rawValue}" is not a size such as 8MiB or 4096`));
    else spec.value = rawValue;
  }
  for (const option of options) {
    const match = /^times=(\d+)$/.exec(option);
    if (match === null) throw bad(`unknown option "${option}"`);
    spec.times = Number(match[1]);
  }
  if (scope !== undefined) {
    if (!REQUEST_FAULTS.includes(kind))
      throw bad(`"${kind}" is global; only ${REQUEST_FAULTS.join(', ')} take @METHOD PATH`);
    const parts = scope.split(/\s+/);
    if (parts.length > 2 || parts[parts.length - 1] === '') throw bad('the scope is "@METHOD PATH" or "@PATH"');
    if (parts.length === 2) spec.method = (parts[0] ?? '').toUpperCase();
    spec.path = parts[parts.length - 1];
  }
  return spec;
}

/** Accepts strings in the fault syntax or FaultSpec objects (checked the same way). */
function normalizeFault(fault: string | FaultSpec): FaultSpec {
  return typeof fault === 'string' ? parseFault(fault) : parseFault(formatFault(fault));
}

export function formatFault(spec: FaultSpec): string {
  let out: string = spec.kind;
  if (spec.value !== undefined) {
    const needs = NEEDS_VALUE[spec.kind];
    out += `=${needs === 'duration' || needs === 'offset' ? `${spec.value}ms` : needs === 'size' ? formatSize(Number(spec.value)) : String(spec.value)}`;
  }
  if (spec.times !== undefined) out += `,times=${spec.times}`;
  if (spec.path !== undefined)
    out += `@${spec.method !== undefined && spec.method !== '*' ? `${spec.method} ` : ''}${spec.path}`;
  return out;
}

function failWith(error: Error): never {
  throw error;
}

function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text);
  if (match === null) return undefined;
  const factor = match[2] === 's' ? 1000 : match[2] === 'm' ? 60_000 : 1;
  return Math.round(Number(match[1]) * factor);
}

/** A signed duration for the clock: `-2h`, `10m`, `3d`, `-1500ms`. */
function parseOffset(text: string): number | undefined {
  const match = /^(-?)(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text);
  if (match === null) return undefined;
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[3] ?? 'ms'] ?? 1;
  return (match[1] === '-' ? -1 : 1) * Math.round(Number(match[2]) * factor);
}

const SIZE_UNITS: Record<string, number> = { '': 1, B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 };

function parseSize(text: string): number | undefined {
  const match = /^(\d+)(B|KiB|MiB|GiB)?$/.exec(text);
  if (match === null) return undefined;
  return Number(match[1]) * (SIZE_UNITS[match[2] ?? ''] ?? 1);
}

function formatSize(bytes: number): string {
  for (const unit of ['GiB', 'MiB', 'KiB'] as const) {
    const factor = SIZE_UNITS[unit] ?? 1;
    if (bytes >= factor && bytes % factor === 0) return `${bytes / factor}${unit}`;
  }
  return String(bytes);
}

function parseRate(text: string): number | undefined {
  const percent = text.endsWith('%');
  const n = Number(percent ? text.slice(0, -1) : text);
  if (!Number.isFinite(n)) return undefined;
  const rate = percent ? n / 100 : n;
  return rate >= 0 && rate <= 1 ? rate : undefined;
}

function globToRegExp(pattern: string): RegExp {
  const escaped = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`);
}

interface ActiveFault {
  spec: FaultSpec;
  remaining: number;
  pattern?: RegExp | undefined;
}

/** The faults a device carries now, with what is left of each `times`. */
export class FaultSet {
  private faults: ActiveFault[] = [];

  constructor(private readonly random: () => number = Math.random) {}

  set(faults: readonly (string | FaultSpec)[]): void {
    this.faults = faults.map(normalizeFault).map((spec) => ({
      spec,
      remaining: spec.times ?? Number.POSITIVE_INFINITY,
      pattern: spec.path === undefined ? undefined : globToRegExp(spec.path),
    }));
  }

  list(): string[] {
    return this.faults.filter((f) => f.remaining > 0).map((f) => formatFault(f.spec));
  }

  /** Total latency to add to this request (every matching latency fault adds up). */
  latencyFor(method: string, path: string): number {
    let ms = 0;
    for (const fault of this.matching('latency', method, path)) {
      if (this.fire(fault)) ms += Number(fault.spec.value);
    }
    return ms;
  }

  /** Whether this request draws an `error` or `drop` fault. */
  draws(kind: 'error' | 'drop', method: string, path: string): boolean {
    for (const fault of this.matching(kind, method, path)) {
      if (this.random() < Number(fault.spec.value) && this.fire(fault)) return true;
    }
    return false;
  }

  /** The first matching `throttle` or `huge-body` fault for this request, used up by one; its value (ms, bytes). */
  takes(kind: 'throttle' | 'huge-body', method: string, path: string): number | undefined {
    for (const fault of this.matching(kind, method, path)) {
      if (this.fire(fault)) return Number(fault.spec.value);
    }
    return undefined;
  }

  /** How far the device's clock is off (ms; every clock-offset fault adds up): its Date header shows it. */
  clockOffsetMs(): number {
    return this.faults
      .filter((f) => f.spec.kind === 'clock-offset' && f.remaining > 0)
      .reduce((sum, f) => sum + Number(f.spec.value), 0);
  }

  /** Takes a restart fault of that kind for this restart, if one is set. */
  takeRestartFault(kind: RestartFaultKind): FaultSpec | undefined {
    const fault = this.faults.find((f) => f.spec.kind === kind && f.remaining > 0);
    return fault !== undefined && this.fire(fault) ? fault.spec : undefined;
  }

  private matching(kind: FaultKind, method: string, path: string): ActiveFault[] {
    return this.faults.filter(
      (f) =>
        f.spec.kind === kind &&
        f.remaining > 0 &&
        (f.spec.method === undefined || f.spec.method === '*' || f.spec.method === method) &&
        (f.pattern === undefined || f.pattern.test(path)),
    );
  }

  private fire(fault: ActiveFault): boolean {
    if (fault.remaining <= 0) return false;
    fault.remaining -= 1;
    return true;
  }
}
