import type { DeviceResult } from '../apply/index.js';
import { ErrorCode } from '../core/errors.js';
import { type Problem, Severity } from '../core/problem.js';
import { visibleText as v } from '../core/visible-text.js';

/**
 * One table from a failure's class to its reason and the action on site. The result file, the
 * status page's banner, the desktop notification and usb.log's summary all say what this says, so
 * a technician without a terminal learns why and what to do where they stand.
 */

export const FailureClass = {
  Unreachable: 'unreachable',
  TlsIdentity: 'tls-identity',
  Credentials: 'credentials',
  InvalidStick: 'invalid-stick',
  DeviceRefused: 'device-refused',
  Dot1xNotAuthorized: 'dot1x-not-authorized',
  DeviceLost: 'device-lost',
  WrongResult: 'wrong-result',
  ServiceNotConfirmed: 'service-not-confirmed',
  Other: 'other',
} as const;
export type FailureClass = (typeof FailureClass)[keyof typeof FailureClass];

export interface FailureReason {
  class: FailureClass;
  /** Why, in one sentence (the device's own sentence where it gave one). */
  reason: string;
  /** What to do on site. */
  action: string;
}

/** What one device's failure can be: an invalid stick and an unconfirmed service are the job's, not a device's. */
type DeviceFailureClass = Exclude<FailureClass, 'invalid-stick' | 'service-not-confirmed'>;

/** The class of a device's failure, from its code and facts (never from its sentence). */
export function failureClassOf(result: DeviceResult): DeviceFailureClass {
  if (result.deviceLost === true && result.code !== ErrorCode.DevicePinMismatch) return FailureClass.DeviceLost;
  if (result.dot1xRefused !== undefined && result.dot1xRefused.length > 0) return FailureClass.Dot1xNotAuthorized;
  if (result.rollback !== undefined) return FailureClass.WrongResult;
  switch (result.code) {
    case ErrorCode.DeviceUnreachable:
    case ErrorCode.DeviceTimeout:
    case ErrorCode.DeviceNotAnswering:
      return FailureClass.Unreachable;
    case ErrorCode.DeviceTls:
    case ErrorCode.DevicePinMismatch:
      return FailureClass.TlsIdentity;
    case ErrorCode.DeviceAuth:
      return FailureClass.Credentials;
    case ErrorCode.DeviceRefused:
    case ErrorCode.DeviceHttp:
    case ErrorCode.PlanRefused:
      return FailureClass.DeviceRefused;
    default:
      return FailureClass.Other;
  }
}

const ACTIONS: Record<DeviceFailureClass, (url: string) => string> = {
  [FailureClass.Unreachable]: (url) =>
    `check that the MP is powered and its link LED is on, that the laptop's cable is in the MP's management port (the port whose address the stick names), that the laptop has an address in that network, and that ${url} is the MP's address (open it in a browser: does anything answer there?)`,
  [FailureClass.TlsIdentity]: () =>
    "compare the certificate fingerprint the MP shows (its console or label) with the stick's tls.fingerprint_sha256 (or agent.yaml's trust for this URL); if the MP was re-installed, update the pin; if not, stop: something else may be answering in its place",
  [FailureClass.Credentials]: () =>
    "check the user name and the password the stick gives for this MP (or agent.yaml's for its URL); the MP's own password may have been changed on site",
  [FailureClass.DeviceRefused]: () =>
    'correct in mpprov.yaml what the MP names in its sentence, then insert the stick again',
  [FailureClass.Dot1xNotAuthorized]: () =>
    "check the 802.1X settings on the stick against the switch port's (the usb.log names the likely causes, most likely first: the password or identity, the RADIUS server's CA, the EAP method), then insert the stick again",
  [FailureClass.DeviceLost]: () =>
    'go to the MP: check its power, its link LED and its console; the new settings may have cut off the port the laptop reaches it through (the usb.log names the last step that succeeded)',
  [FailureClass.WrongResult]: () =>
    'the MP did not run what was asked; read what usb.log says was written back, check the MP on site, then insert the stick again',
  [FailureClass.Other]: () =>
    'read usb.log on this stick for the reason, fix mpprov.yaml or the device it names, and insert the stick again',
};

/** The reason and the action for one failed device. */
export function deviceFailureReason(result: DeviceResult): FailureReason {
  const failure = failureClassOf(result);
  return {
    class: failure,
    reason: `${v(result.device)}: ${v(result.message)}`,
    action: ACTIONS[failure](v(result.url)),
  };
}

/** An MP configured and verified whose return to the monitoring service was not confirmed. */
export function serviceFailureReason(result: DeviceResult): FailureReason {
  return {
    class: FailureClass.ServiceNotConfirmed,
    reason: `${v(result.device)} is configured, but the monitoring service did not confirm it: ${v(result.service?.sentence ?? 'not checked')}`,
    action:
      "check on site that the MP reaches the monitoring service (its gateway, DNS and the firewall's outbound rules); the MP's configuration itself need not be run again",
  };
}

const SHOWN_PROBLEMS = 3;

/** An invalid stick: its first three errors with their lines, then how many more usb.log has. */
export function invalidStickReason(configName: string, problems: readonly Problem[]): FailureReason {
  const errors = problems.filter((p) => p.severity === Severity.Error);
  const shown = errors
    .slice(0, SHOWN_PROBLEMS)
    .map((p) => `line ${p.line}: ${v(p.path === '' ? '' : `${p.path}: `)}${v(p.message)}`);
  const more = errors.length - shown.length;
  return {
    class: FailureClass.InvalidStick,
    reason: `${v(configName)} is invalid: ${shown.join('; ')}${more > 0 ? `; and ${more} more in usb.log` : ''}`,
    action: `fix ${v(configName)} (all its problems are in usb.log, each with its line) and insert the stick again`,
  };
}

/** The one "what to do" sentence of a finished job, from its first failure (and how many more failed). */
export function adviceSentence(reasons: readonly FailureReason[]): string | undefined {
  const first = reasons[0];
  if (first === undefined) return undefined;
  const others = reasons.length - 1;
  return `What to do: ${first.reason}. ${capitalised(first.action)}.${others > 0 ? ` (${others} more failure(s): see usb.log.)` : ''}`;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
