import { ErrorCode, isMpprovError, VerificationError } from '../core/errors.js';
import type { Step } from '../plan/index.js';
import { Dot1xNotAuthorizedError, Dot1xWaitAbortedError } from './dot1x-authorization.js';
import {
  CertificateChangedError,
  DeviceLostError,
  RestartSkippedError,
  RestartWaitAbortedError,
} from './restart-and-wait.js';

/** What a failed step means for the run: the sentence, the code, and what to do about it. */
export interface StepFailure {
  message: string;
  code: string;
  deviceLost: boolean;
  /** The device answered but runs the wrong configuration: the case for a roll-back. */
  wrongResult: boolean;
  /** Interfaces whose port did not authorize the 802.1X of this run: the roll-back report says what they hold now. */
  dot1xRefused?: string[];
}

const ON_SITE_CHECKS =
  "on site, check the link and switch-port lights, whether the switch port demands 802.1X and accepted the credentials (switch or RADIUS log), and the MP's console";

/** Pure: decided by the error's class and data, never by its message. */
export function stepFailure(error: unknown, step: Step, description: string, timeoutMs: number): StepFailure {
  if (error instanceof DeviceLostError) {
    return {
      message: `${error.message} (no answer for ${Math.round(timeoutMs / 1000)} s); ${ON_SITE_CHECKS}`,
      code: ErrorCode.DeviceUnreachable,
      deviceLost: true,
      wrongResult: false,
    };
  }
  // Nothing more may be sent to a device whose certificate changed: no roll-back, no take-back.
  if (error instanceof CertificateChangedError)
    return { message: error.message, code: error.code, deviceLost: true, wrongResult: false };
  if (
    error instanceof RestartWaitAbortedError ||
    error instanceof RestartSkippedError ||
    error instanceof Dot1xWaitAbortedError
  ) {
    return { message: error.message, code: error.code, deviceLost: false, wrongResult: false };
  }
  if (error instanceof Dot1xNotAuthorizedError) {
    // The settings are active as requested, but the port carries no traffic: as wrong as a wrong setting.
    return {
      message: error.message,
      code: ErrorCode.ApplyFailed,
      deviceLost: false,
      wrongResult: true,
      dot1xRefused: error.refused.map((w) => w.name),
    };
  }
  if (error instanceof VerificationError) {
    const problems = error.problems.join('; ');
    switch (error.view) {
      case 'pending':
        return {
          message: `the device's pending configuration differs from what was posted, so networking was not restarted: ${problems}`,
          code: ErrorCode.ApplyFailed,
          deviceLost: false,
          wrongResult: false,
        };
      case 'never-active':
        return {
          message: `the networking restart did not make the changes active (they are still pending): ${problems}; a reboot of the MP may be needed`,
          code: ErrorCode.ApplyFailed,
          deviceLost: false,
          wrongResult: false,
        };
      case 'active':
        return {
          message: `after the restart the device runs a different configuration than requested: ${problems}`,
          code: ErrorCode.ApplyFailed,
          deviceLost: false,
          wrongResult: true,
        };
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    message: `${description} failed: ${message}`,
    code: isMpprovError(error) ? error.code : ErrorCode.Internal,
    deviceLost: false,
    wrongResult: step.kind === 'verify-active',
  };
}
