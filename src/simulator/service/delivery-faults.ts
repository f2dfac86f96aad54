import { FaultSyntaxError } from '../faults.js';

/**
 * Faults of event delivery, for tests of a receiver: `drop` (the event is not sent), `delay=MS`
 * (it waits that long before it is sent), `duplicate` (it is sent twice) and `reorder` (it is held
 * and sent after the next event to the same server). Written like the device's faults, as strings
 * with an optional `,times=N` (the fault applies to that many deliveries, else to every one until
 * cleared), e.g. `drop,times=2` or `delay=1500`. Each fault counts every delivery it applies to:
 * one event to one configured server.
 */

export type DeliveryFaultKind = 'drop' | 'delay' | 'duplicate' | 'reorder';

export interface DeliveryFault {
  kind: DeliveryFaultKind;
  /** `delay` only. */
  ms?: number;
  /** Deliveries left; undefined: every one. */
  times?: number;
}

/** What the active faults do to one delivery. */
export interface DeliveryEffects {
  drop: boolean;
  delayMs: number;
  duplicate: boolean;
  reorder: boolean;
  /** `drop`, `delay 500 ms`, ... as the delivery log names them. */
  names: string[];
}

const MAX_DELAY_MS = 600_000;
const SYNTAX = /^(drop|duplicate|reorder|delay=(\d{1,7}))(?:,times=(\d{1,6}))?$/;

/** One fault from its text; a FaultSyntaxError (code SIM_FAULT_SYNTAX) naming the accepted forms when it is not one. */
export function parseDeliveryFault(text: string): DeliveryFault {
  const match = SYNTAX.exec(text.trim());
  const delay = match?.[2] === undefined ? undefined : Number(match[2]);
  if (match === null || (delay !== undefined && delay > MAX_DELAY_MS) || match[3] === '0') {
    throw new FaultSyntaxError(
      `"${printable(text)}" is not an event delivery fault: write drop, duplicate, reorder or delay=MS ` +
        `(MS up to ${MAX_DELAY_MS}), each optionally followed by ,times=N (N from 1).`,
    );
  }
  const kind = (match[1]?.startsWith('delay=') === true ? 'delay' : match[1]) as DeliveryFaultKind;
  return {
    kind,
    ...(delay === undefined ? {} : { ms: delay }),
    ...(match[3] === undefined ? {} : { times: Number(match[3]) }),
  };
}

export class DeliveryFaults {
  #faults: DeliveryFault[] = [];

  /** Replaces the faults (all parsed first: a bad one changes nothing). */
  set(specs: readonly (string | DeliveryFault)[]): void {
    this.#faults = specs.map((spec) => (typeof spec === 'string' ? parseDeliveryFault(spec) : { ...spec }));
  }

  clear(): void {
    this.#faults = [];
  }

  list(): DeliveryFault[] {
    return this.#faults.map((f) => ({ ...f }));
  }

  /** The effects on the next delivery; uses up one of each applying fault's `times`. */
  take(): DeliveryEffects {
    const effects: DeliveryEffects = { drop: false, delayMs: 0, duplicate: false, reorder: false, names: [] };
    for (const fault of this.#faults) {
      if (fault.kind === 'delay') effects.delayMs += fault.ms ?? 0;
      else effects[fault.kind] = true;
      effects.names.push(fault.kind === 'delay' ? `delay ${fault.ms ?? 0} ms` : fault.kind);
      if (fault.times !== undefined) fault.times -= 1;
    }
    this.#faults = this.#faults.filter((f) => f.times === undefined || f.times > 0);
    return effects;
  }
}

function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return clean.length > 60 ? `${clean.slice(0, 60)}...` : clean;
}
