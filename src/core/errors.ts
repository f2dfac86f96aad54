/**
 * One error hierarchy for the whole agent. Every error has a stable `code` that callers branch on
 * (never the message), a sentence that says what failed and where, and the original `cause`.
 * Secrets never go into a message: callers pass names of things, not their values.
 */

export const ErrorCode = {
  ConfigInvalid: 'MPPROV_CONFIG_INVALID',
  ConfigUnreadable: 'MPPROV_CONFIG_UNREADABLE',
  DeviceAuth: 'MPPROV_DEVICE_AUTH',
  DeviceTls: 'MPPROV_DEVICE_TLS',
  DeviceRefused: 'MPPROV_DEVICE_REFUSED',
  DeviceHttp: 'MPPROV_DEVICE_HTTP',
  DeviceUnreachable: 'MPPROV_DEVICE_UNREACHABLE',
  DeviceTimeout: 'MPPROV_DEVICE_TIMEOUT',
  DeviceResponse: 'MPPROV_DEVICE_RESPONSE',
  DevicePinMismatch: 'MPPROV_DEVICE_PIN_MISMATCH',
  DeviceRateLimited: 'MPPROV_DEVICE_RATE_LIMITED',
  DeviceNotAnswering: 'MPPROV_DEVICE_NOT_ANSWERING',
  // The monitoring service's data API (src/service): one code per documented status and message.
  ServiceBadRequest: 'MPPROV_SERVICE_BAD_REQUEST',
  ServiceNoCredentials: 'MPPROV_SERVICE_NO_CREDENTIALS',
  ServiceBadCredentials: 'MPPROV_SERVICE_BAD_CREDENTIALS',
  ServiceUndecodableCredentials: 'MPPROV_SERVICE_UNDECODABLE_CREDENTIALS',
  ServiceForbidden: 'MPPROV_SERVICE_FORBIDDEN',
  ServiceNotFound: 'MPPROV_SERVICE_NOT_FOUND',
  ServiceNotAcceptable: 'MPPROV_SERVICE_NOT_ACCEPTABLE',
  ServiceRateLimited: 'MPPROV_SERVICE_RATE_LIMITED',
  ServiceInternalError: 'MPPROV_SERVICE_INTERNAL_ERROR',
  ServiceHttp: 'MPPROV_SERVICE_HTTP',
  ServiceTls: 'MPPROV_SERVICE_TLS',
  ServiceUnreachable: 'MPPROV_SERVICE_UNREACHABLE',
  ServiceTimeout: 'MPPROV_SERVICE_TIMEOUT',
  ServiceResponse: 'MPPROV_SERVICE_RESPONSE',
  ServiceBodyTooLarge: 'MPPROV_SERVICE_BODY_TOO_LARGE',
  PlanRefused: 'MPPROV_PLAN_REFUSED',
  ApplyFailed: 'MPPROV_APPLY_FAILED',
  DeviceBusy: 'MPPROV_DEVICE_BUSY',
  VerificationFailed: 'MPPROV_VERIFICATION_FAILED',
  Usage: 'MPPROV_USAGE',
  /** A state-folder file is a symlink, FIFO or device where a regular file belongs. */
  StateFileRefused: 'MPPROV_STATE_FILE_REFUSED',
  /** Another `mpprov observe` holds the state folder. */
  ObserveBusy: 'MPPROV_OBSERVE_BUSY',
  /** The events receiver cannot listen where service.events.listen says. */
  ObserveListen: 'MPPROV_OBSERVE_LISTEN',
  Internal: 'MPPROV_INTERNAL',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export class MpprovError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MpprovError';
    this.code = code;
  }
}

export function isMpprovError(value: unknown): value is MpprovError {
  return value instanceof MpprovError;
}

/** Exit statuses of the CLI, one table for every command. */
export const ExitStatus = {
  Ok: 0,
  Failure: 1,
  /** `mpprov plan`: the plan has changes (as `diff` and `terraform plan -detailed-exitcode` do). */
  Changes: 2,
  /** `mpprov apply`: every device configured and verified, at least one not confirmed connected to the monitoring service. */
  NotConnected: 3,
  Usage: 64,
} as const;

/** 30000 -> "30 s", 250 -> "0.25 s". */
export function secondsText(ms: number): string {
  return `${Math.round(ms) / 1000} s`;
}

// The errors of talking to a device or the service are in src/http (transport), src/client and
// src/service (what an answer's status means): they stand on MpprovError and these codes.

// ---------------------------------------------------------------------------------------------
// Verification: the device answered, but its configuration is not what was asked for.
// ---------------------------------------------------------------------------------------------

export const VerifiedView = {
  /** The pending view after posting, before the restart: networking is then not restarted. */
  Pending: 'pending',
  /** The active view after the restart differs: a wrong result, the case for a roll-back. */
  Active: 'active',
  /** After the restart the changes are still only pending: the restart did not take. */
  NeverActive: 'never-active',
} as const;
export type VerifiedView = (typeof VerifiedView)[keyof typeof VerifiedView];

export class VerificationError extends MpprovError {
  constructor(
    readonly view: VerifiedView,
    /** One sentence per stanza that differs; never a secret value (write-only fields are compared by their _set markers). */
    readonly problems: readonly string[],
  ) {
    super(ErrorCode.VerificationFailed, `${VIEW_TEXT[view]}: ${problems.join('; ')}`);
    this.name = 'VerificationError';
  }
}

const VIEW_TEXT: Record<VerifiedView, string> = {
  pending: "the device's pending configuration differs from what was posted",
  active: 'after the restart the device runs a different configuration than requested',
  'never-active': 'the networking restart did not make the changes active (they are still pending)',
};
