import { ErrorCode } from '../core/errors.js';
import type { Step } from '../plan/index.js';
import type { StanzaRef } from './restore-actions.js';
import type { StepFailure } from './step-failure.js';

/** What a run does after a failed step, besides reporting it. */
export type Recovery =
  /** The restart happened and the device runs the wrong configuration: put the old one back. */
  | { kind: 'roll-back' }
  /** No restart yet: take back what this run posted to the pending view. */
  | { kind: 'take-back'; stanzas: StanzaRef[] }
  | { kind: 'none' };

export interface FailedRun {
  failure: StepFailure;
  steps: readonly Step[];
  /** Index of the failed step in `steps`. */
  failedIndex: number;
  /** Whether a networking restart step of this run completed. */
  restarted: boolean;
  /** Whether roll-back is enabled (--no-rollback turns it off). */
  rollback: boolean;
}

/** Pure: the roll-back decision of provisionDevice, tested without a device. */
export function chooseRecovery(run: FailedRun): Recovery {
  const { failure } = run;
  // A lost device cannot be talked to: nothing to send, the technician must go on site.
  if (failure.deviceLost) return { kind: 'none' };
  if (failure.wrongResult && run.restarted) return run.rollback ? { kind: 'roll-back' } : { kind: 'none' };
  // After a restart the pending view is the active one again: nothing left pending to take back.
  if (run.restarted) return { kind: 'none' };
  // A step the device refused did not change it; a dropped connection may have.
  const upTo = failure.code === ErrorCode.DeviceRefused ? run.failedIndex : run.failedIndex + 1;
  const stanzas = stanzasTouched(run.steps.slice(0, upTo));
  return stanzas.length > 0 ? { kind: 'take-back', stanzas } : { kind: 'none' };
}

/** Stanzas these steps may have changed in the pending view. */
export function stanzasTouched(steps: readonly Step[]): StanzaRef[] {
  return steps.flatMap((step) => {
    if (step.kind === 'post-stanza') return [{ name: step.stanza.name, family: step.stanza.family }];
    if (step.kind === 'delete-stanza' || step.kind === 'restore-stanza')
      return [{ name: step.name, family: step.family }];
    return [];
  });
}
