/**
 * The simulator's own errors: what can stop a simulated device from starting. The simulator is a
 * product of its own inside the repository (it plays the device the agent is tested against), so
 * it does not throw the agent's errors: a test that sees a SimulatorError knows the device, not
 * the agent, refused. Every error has a stable `code` to branch on (never the message); the
 * message is one sentence for the person who started the simulator. Answers of the Admin API are
 * not errors: they are HTTP responses (admin-api.ts).
 */

export const SimulatorErrorCode = {
  /** A bad option or argument: flag value, unknown model, a host that is not loopback, --cert without --key. */
  Usage: 'SIM_USAGE',
  /** A fault specification that does not parse (--fault, setFaults). */
  FaultSyntax: 'SIM_FAULT_SYNTAX',
  /** The real 802.1X backend cannot run here: not root, commands missing, namespaces refused. */
  BackendUnavailable: 'SIM_BACKEND_UNAVAILABLE',
  /** A file the simulator was given (device file, authenticator profile, --cert, --key) cannot be read. */
  FileUnreadable: 'SIM_FILE_UNREADABLE',
  /** A device file or authenticator profile says something the simulator cannot take. */
  FileInvalid: 'SIM_FILE_INVALID',
  /** The starting configuration breaks the device's own rules, or would leave it unreachable. */
  StartRefused: 'SIM_START_REFUSED',
  /** An authenticator profile holds what hostapd's eap_user file cannot carry. */
  ProfileNotRenderable: 'SIM_PROFILE_NOT_RENDERABLE',
} as const;
export type SimulatorErrorCode = (typeof SimulatorErrorCode)[keyof typeof SimulatorErrorCode];

/**
 * Errors in how the simulator was asked to start, fixed on the command line: `mpprov simulate`
 * exits with its usage status for these (a missing prerequisite of `--dot1x-backend real` is one:
 * the fix is another flag or running as root).
 */
const USAGE_CODES: ReadonlySet<SimulatorErrorCode> = new Set([
  SimulatorErrorCode.Usage,
  SimulatorErrorCode.FaultSyntax,
  SimulatorErrorCode.BackendUnavailable,
]);

export class SimulatorError extends Error {
  readonly code: SimulatorErrorCode;

  constructor(code: SimulatorErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SimulatorError';
    this.code = code;
  }

  /** True when the fix is in the command line or the options (see USAGE_CODES). */
  get isUsage(): boolean {
    return USAGE_CODES.has(this.code);
  }
}

export function isSimulatorError(value: unknown): value is SimulatorError {
  return value instanceof SimulatorError;
}

/** "Cannot read device file x.yaml.": one wording for every file the simulator reads. */
export function unreadableFile(what: string, file: string, cause: unknown): SimulatorError {
  return new SimulatorError(SimulatorErrorCode.FileUnreadable, `Cannot read ${what} ${file}.`, { cause });
}
