import { ErrorCode, MpprovError } from '../core/errors.js';
import type { Step } from '../plan/index.js';
import { stanzasTouched } from './choose-recovery.js';

/** The signals a command stops on, with their numbers (exit status 128 + number). */
export const STOP_SIGNALS = { SIGINT: 2, SIGTERM: 15 } as const;
export type StopSignal = keyof typeof STOP_SIGNALS;

/**
 * The abort reason of a run a person stopped (SIGTERM, Ctrl-C): every device request under way is
 * cut with it, and the engine recognises it by class, never by its message.
 */
export class StoppedBySignalError extends MpprovError {
  constructor(readonly signalName: StopSignal) {
    super(ErrorCode.ApplyFailed, `stopped by ${signalName}`);
    this.name = 'StoppedBySignalError';
  }
}

/** The signal that stopped this run, when the run was cut (not the daemon's gentle stop). */
export function cutBy(signal: AbortSignal | undefined): StopSignal | undefined {
  return signal?.aborted === true && signal.reason instanceof StoppedBySignalError
    ? signal.reason.signalName
    : undefined;
}

/**
 * Where a device's run stopped, and what was and was not sent, in words a technician can act on:
 * `during` the step at `index` (0-based; its request was cut) or `before` it (nothing of it went
 * out). `restartRequested`: the device accepted this run's networking restart.
 */
export function stoppedAtStep(input: {
  steps: readonly Step[];
  index: number;
  description: string;
  at: 'during' | 'before';
  restarted: boolean;
  restartRequested: boolean;
}): string {
  const { steps, index, description } = input;
  const total = steps.length;
  const step = steps[index];
  const parts = [`${input.at} step ${index + 1}/${total} "${description}"`];
  if (index > 0) parts.push(`${stepRange(1, index)} ${index === 1 ? 'was' : 'were'} sent and accepted`);
  if (input.at === 'before') parts.push('nothing from that step on was sent');
  else {
    if (step?.kind === 'restart-networking') {
      parts.push(
        input.restartRequested
          ? 'the networking restart was requested, so the device may be restarting with the new settings (not verified)'
          : 'the networking restart may or may not have been requested',
      );
    } else if (step?.kind === 'verify-active' || step?.kind === 'verify-pending') {
      parts.push('that step only reads the device');
    } else {
      parts.push('that request may or may not have reached the device');
    }
    if (index + 1 < total)
      parts.push(`${stepRange(index + 2, total)} ${index + 2 === total ? 'was' : 'were'} not sent`);
  }
  const restartUnderWay = input.restartRequested || (input.at === 'during' && step?.kind === 'restart-networking');
  if (input.restarted) parts.push('the new settings are active but were not all verified');
  else if (!restartUnderWay) {
    const touched = stanzasTouched(steps.slice(0, input.at === 'during' ? index + 1 : index));
    if (touched.length > 0) {
      parts.push(
        `${touched.map((t) => `${t.name} ${t.family}`).join(', ')} may stay pending on the device (not active) until a networking restart or the next run replaces them`,
      );
    }
  }
  // Commas, not semicolons: the CLI's one sentence joins the devices with semicolons.
  return parts.join(', ');
}

/** "step 4" or "steps 2-4": never "steps 4-4". */
export function stepRange(first: number, last: number): string {
  return first === last ? `step ${first}` : `steps ${first}-${last}`;
}
