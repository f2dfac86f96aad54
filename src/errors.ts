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
  PlanRefused: 'MPPROV_PLAN_REFUSED',
  ApplyFailed: 'MPPROV_APPLY_FAILED',
  Usage: 'MPPROV_USAGE',
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
  Usage: 64,
} as const;

export function exitStatusFor(code: ErrorCode): number {
  return code === ErrorCode.Usage ? ExitStatus.Usage : ExitStatus.Failure;
}
