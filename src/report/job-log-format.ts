import type { ApplyEvent, DeviceResult, StickResult } from '../apply/index.js';
// Values report needs from apply, from their own files: apply's index loads the device client.
import { MP_BOOTING } from '../apply/apply-events.js';
import { pathsWords } from '../apply/path-report.js';
import { PATHS_NOT_CHECKED, type Problem, Severity } from '../config/index.js';
import { ErrorCode } from '../core/errors.js';
import { visibleText as v } from '../core/visible-text.js';
import type { LogLevel } from './agent-logger.js';
import { adviceSentence, deviceFailureReason, invalidStickReason, serviceFailureReason } from './failure-reasons.js';
import { formatProblem, summarizeProblems } from './format-problems.js';

/**
 * The words of a job's log: usb.log, the local copy and the journal say the same lines. Pure
 * functions: what to write, never where.
 *
 *   ======== mpprov job j20261122-124800-3fa9 ========
 *   time:    2026-11-22 12:48:00 +0000
 *   agent:   mpprov 0.1.0 on laptop-07
 *   stick:   MPSTICK (/media/tech/MPSTICK)
 *   config:  mpprov.yaml, sha256 3fa9c1...
 *   12:48:00.120 [j20261122-124800-3fa9] read the stick: 3 files, 1.2 KiB
 *   ...
 *   RESULT: CHANGED  branch-12-mp1: changed and verified  [j20261122-124800-3fa9]
 *
 * Names, labels, URLs and sentences come from the stick and the devices: each is passed through
 * visibleText where it is put into a line, and formatJobLine escapes the whole line again, so a
 * newline or an escape sequence in any of them can neither start a line of its own (a forged
 * RESULT line) nor reach a terminal that shows the log.
 */

export interface JobHeader {
  jobId: string;
  started: Date;
  agentVersion: string;
  hostname: string;
  source: 'stick' | 'profile';
  /** The stick's label, or the profile's file name. */
  label: string;
  /** The stick's mount folder, or the profiles folder. */
  location: string;
  configName: string;
  configSha256: string;
}

export interface LogLine {
  level: LogLevel;
  text: string;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** `2026-11-22 12:48:00 +0100`, in the laptop's time zone. */
export function formatLocalTime(date: Date): string {
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const zone = `${sign}${pad(Math.floor(Math.abs(offset) / 60))}${pad(Math.abs(offset) % 60)}`;
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())} ${zone}`;
}

export function formatJobHeader(header: JobHeader): string {
  const where =
    header.source === 'stick'
      ? `stick:   ${v(header.label)} (${v(header.location)})`
      : `profile: ${v(header.label)} (${v(header.location)})`;
  return [
    '',
    `======== mpprov job ${header.jobId} ========`,
    `time:    ${formatLocalTime(header.started)}`,
    `agent:   mpprov ${v(header.agentVersion)} on ${v(header.hostname)}`,
    where,
    `config:  ${v(header.configName)}, sha256 ${header.configSha256 === '' ? '(unreadable)' : v(header.configSha256)}`,
    '',
  ].join('\n');
}

/**
 * A body line: `12:48:00.120 [j20261122-124800-3fa9] text`. One text is one physical line: a
 * newline or any other control character in it is escaped (visibleText), never obeyed, so nothing
 * in a text can begin a line of its own. Several lines are passed as several texts.
 */
export function formatJobLine(time: Date, jobId: string, text: string | readonly string[]): string {
  const stamp = `${pad(time.getHours())}:${pad(time.getMinutes())}:${pad(time.getSeconds())}.${pad(time.getMilliseconds(), 3)}`;
  const lines = typeof text === 'string' ? [text] : text;
  return lines.map((line) => `${stamp} [${jobId}] ${v(line)}\n`).join('');
}

/** A stick's problem in usb.log, labelled by its severity: "problem:" for an error, "warning:" for a warning. */
export function formatProblemLine(problem: Problem): LogLine {
  if (problem.severity === Severity.Error) return { level: 'error', text: `problem: ${formatProblem(problem)}` };
  // formatProblem says "warning:" before the message already; the label leads, and is not said twice.
  return { level: 'warn', text: `warning: ${formatProblem({ ...problem, severity: Severity.Error })}` };
}

export function formatInvalidLine(configName: string, problems: readonly Problem[]): LogLine {
  return {
    level: 'error',
    text: `${v(configName)} is INVALID (${summarizeProblems(problems)}): nothing was sent to any device`,
  };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Turns engine events into log lines; keeps the little state a readable log needs (step totals, wait throttling). */
export function createEventFormatter(): (event: ApplyEvent) => LogLine[] {
  const totals = new Map<string, number>();
  const lastWait = new Map<string, number>();
  // A path's progress is written when what it says changes, not at every round.
  const lastPathSentence = new Map<string, string>();
  return (event) => {
    switch (event.type) {
      case 'device-start':
        return [{ level: 'info', text: `[${v(event.device)}] connecting to ${v(event.url)}` }];
      case 'plan': {
        const lines: LogLine[] = [];
        if (event.refusals.length > 0) {
          for (const refusal of event.refusals)
            lines.push({ level: 'error', text: `[${v(event.device)}] REFUSED: ${v(refusal)}` });
        } else if (!event.hasChanges) {
          lines.push({
            level: 'info',
            text: `[${v(event.device)}] already applied: the device matches the configuration`,
          });
        } else {
          lines.push({ level: 'info', text: `[${v(event.device)}] plan: ${event.steps.length} step(s)` });
          event.steps.forEach((step, i) =>
            lines.push({ level: 'info', text: `[${v(event.device)}]   ${i + 1}. ${v(step)}` }),
          );
        }
        return lines;
      }
      case 'step-start':
        totals.set(event.device, event.total);
        return [
          {
            level: 'info',
            text: `[${v(event.device)}] step ${event.index + 1}/${event.total}: ${v(event.description)} ...`,
          },
        ];
      case 'step-done':
        return [
          {
            level: 'info',
            text: `[${v(event.device)}] step ${event.index + 1}/${totals.get(event.device) ?? '?'} done (${seconds(event.elapsedMs)})`,
          },
        ];
      case 'step-failed':
        return [
          {
            level: 'error',
            text: `[${v(event.device)}] step ${event.index + 1}/${totals.get(event.device) ?? '?'} FAILED after ${seconds(event.elapsedMs)}: ${v(event.error)}`,
          },
        ];
      case 'waiting': {
        // Per step: each wait (the restart's, then 802.1X's) counts its time from its own start.
        const key = `${event.device}\0${event.description}`;
        const last = lastWait.get(key);
        if (last !== undefined && event.elapsedMs - last < 5_000) return [];
        lastWait.set(key, event.elapsedMs);
        return [
          {
            level: 'info',
            text: `[${v(event.device)}] ${v(waitingText(event.elapsedMs, event.reason, event.description))}`,
          },
        ];
      }
      case 'warning':
        return [{ level: 'warn', text: `[${v(event.device)}] warning: ${v(event.message)}` }];
      case 'rollback':
        return [{ level: 'warn', text: `[${v(event.device)}] ROLLBACK: ${v(event.message)}` }];
      case 'service-check-start':
        return [
          {
            level: 'info',
            text: `[${v(event.device)}] confirm the service sees it: asking ${v(event.url)} about "${v(event.hostname)}" for up to ${event.waitS} s ...`,
          },
        ];
      case 'service-waiting': {
        const key = `service ${event.device}`;
        const last = lastWait.get(key);
        if (last !== undefined && event.elapsedMs - last < 10_000) return [];
        lastWait.set(key, event.elapsedMs);
        return [
          {
            level: 'info',
            text: `[${v(event.device)}] waiting for the service (${seconds(event.elapsedMs)}): ${v(event.reason)}`,
          },
        ];
      }
      case 'service-check-done':
        return [
          event.outcome.connected
            ? {
                level: 'info',
                text: `[${v(event.device)}] service: ${v(event.outcome.sentence)} (${seconds(event.outcome.waitedMs)})`,
              }
            : { level: 'warn', text: `[${v(event.device)}] service: NOT CONFIRMED: ${v(event.outcome.sentence)}` },
        ];
      case 'service-paths-start':
        return [
          {
            level: 'info',
            text: `[${v(event.device)}] paths: making sure ${event.targets.length} path(s) exist and measure, for up to ${event.waitS} s: ${event.targets.map(v).join(', ')}`,
          },
        ];
      case 'service-path': {
        const key = `${event.device}\0${event.target}`;
        if (lastPathSentence.get(key) === event.sentence) return [];
        lastPathSentence.set(key, event.sentence);
        return [{ level: 'info', text: `[${v(event.device)}] ${v(event.sentence)} (${seconds(event.elapsedMs)})` }];
      }
      case 'service-paths-done':
        return event.paths.map((path) => ({
          level: path.measuring ? 'info' : 'warn',
          text: `[${v(event.device)}] ${path.measuring ? '' : 'NOT CONFIRMED: '}${v(path.sentence)}`,
        }));
      case 'service-paths-plan':
        return event.paths.map((path) => ({ level: 'info', text: `[${v(event.device)}] ${v(path.sentence)}` }));
      case 'device-result':
        return deviceResultLines(event.result);
    }
  };
}

/**
 * The few words the RESULT line gives the post-check and the paths: `service: connected, 3/3
 * paths measuring`, `service: BLOCKED, 0/2 paths measuring`, `2 paths not checked (no service configured)`.
 */
function serviceWords(result: DeviceResult): string {
  const service = result.service;
  if (service === undefined) {
    const unchecked = result.pathsNotChecked?.length ?? 0;
    return unchecked === 0 ? '' : `, ${unchecked} path${unchecked === 1 ? '' : 's'} ${PATHS_NOT_CHECKED}`;
  }
  const paths = pathsWords(service.paths);
  const words: Record<string, string> = {
    connected: 'connected',
    unknown: 'unknown to the service',
    unavailable: `still UNAVAILABLE after ${Math.round(service.waitedMs / 1000)} s`,
    blocked: 'BLOCKED',
    removed: 'REMOVED',
    new: 'still NEW',
    'bad-token': 'bad token',
    'no-permission': 'no permission',
    unreachable: 'service unreachable',
    unchecked: 'not checked',
  };
  return `, service: ${words[service.kind] ?? service.kind}${paths === undefined ? '' : `, ${paths}`}`;
}

function deviceResultLines(result: DeviceResult): LogLine[] {
  const name = `[${v(result.device)}]`;
  switch (result.outcome) {
    case 'changed':
      return [{ level: 'info', text: `${name} CHANGED: ${v(result.message)} (${seconds(result.durationMs)})` }];
    case 'no-change':
      return [{ level: 'info', text: `${name} NO CHANGE: ${v(result.message)}` }];
    case 'failed': {
      const lines: LogLine[] = [
        { level: 'error', text: `${name} FAILED (${v(result.code ?? ErrorCode.Internal)}): ${v(result.message)}` },
      ];
      if (result.lastSucceededStep !== undefined)
        lines.push({ level: 'error', text: `${name} last step that succeeded: ${v(result.lastSucceededStep)}` });
      // The roll-back's sentence is part of the FAILED line's message: said there, once.
      if (result.deviceLost === true)
        lines.push({
          level: 'error',
          text: `${name} the device did not come back: check it on site before another attempt`,
        });
      return lines;
    }
  }
}

/** The RESULT word: CHANGED, NO CHANGE, OK (mixed), FAILED (invalid, or any device failed). */
export type ResultWord = 'OK' | 'CHANGED' | 'NO CHANGE' | 'FAILED';

export function resultWord(devices: readonly DeviceResult[], invalid: boolean): ResultWord {
  if (invalid || devices.length === 0 || devices.some((d) => d.outcome === 'failed')) return 'FAILED';
  if (devices.every((d) => d.outcome === 'no-change')) return 'NO CHANGE';
  if (devices.every((d) => d.outcome === 'changed')) return 'CHANGED';
  return 'OK';
}

const FAILURE_WORDS: Partial<Record<string, string>> = {
  [ErrorCode.DeviceAuth]: 'wrong user name or password',
  [ErrorCode.DeviceTls]: 'TLS certificate not trusted',
  [ErrorCode.DevicePinMismatch]: 'certificate does not match the pinned fingerprint',
  [ErrorCode.DeviceUnreachable]: 'cannot be reached',
  [ErrorCode.DeviceTimeout]: 'timed out',
  [ErrorCode.DeviceNotAnswering]: 'did not answer in time',
  [ErrorCode.DeviceRefused]: 'refused a request',
  [ErrorCode.DeviceHttp]: 'answered with an HTTP error',
  [ErrorCode.DeviceResponse]: 'answered something unexpected',
  [ErrorCode.DeviceRateLimited]: 'kept refusing as too many requests',
  [ErrorCode.PlanRefused]: 'refused before any change (would cut off access)',
  [ErrorCode.ApplyFailed]: 'apply failed',
  [ErrorCode.Internal]: 'internal error in mpprov (see the log above)',
};

/** A roll-back's outcome in words: "rolled back" only where a request put something back. */
const ROLLBACK_WORDS: Record<NonNullable<DeviceResult['rollback']>['outcome'], string> = {
  restored: 'rollback restored',
  partial: 'rolled back only in part',
  none: 'nothing was written back',
  failed: 'rollback failed',
};

/** A few words per device: `mp1: changed and verified`, `mp2: failed, wrong user name or password`. */
export function deviceWords(result: DeviceResult, stopped: boolean): string {
  switch (result.outcome) {
    case 'changed':
      // A static interface's 802.1X cannot be seen through the Admin API: never called verified.
      if (result.dot1xNotVisible !== undefined && result.dot1xNotVisible.length > 0) {
        return `${v(result.device)}: changed, 802.1X authorization of ${result.dot1xNotVisible.map(v).join(', ')} not visible through the Admin API (check the switch port)${serviceWords(result)}`;
      }
      return `${v(result.device)}: changed and verified${serviceWords(result)}`;
    case 'no-change':
      return `${v(result.device)}: already applied, no restart${serviceWords(result)}`;
    case 'failed': {
      let why = FAILURE_WORDS[result.code ?? ''] ?? 'failed';
      // The engine reports a wait cut short by the shutdown as a lost device: say what happened.
      if (result.deviceLost === true && stopped)
        why = 'the agent stopped while the device was restarting: check it before running the stick again';
      // Back, but behind another certificate: nothing more was sent, and that is not an outage.
      else if (result.deviceLost === true && result.code === ErrorCode.DevicePinMismatch)
        why =
          'came back from the restart with a different TLS certificate (possible interception): check the device before trusting it';
      else if (result.deviceLost === true) why = 'did not come back after the networking restart';
      else if (result.rollback !== undefined) why = `wrong result, ${ROLLBACK_WORDS[result.rollback.outcome]}`;
      else if (stopped)
        why = `stopped by the agent's shutdown${result.lastSucceededStep === undefined ? '' : ` after "${v(result.lastSucceededStep)}"`}`;
      return `${v(result.device)}: failed, ${why}`;
    }
  }
}

export interface JobConclusion {
  word: ResultWord;
  /** Per device, or why the job could not run. */
  summary: string;
  /** "What to do: <reason>. <action>." from the failure table (failure-reasons.ts), when one applies. */
  advice?: string;
}

export function concludeJob(input: {
  result?: StickResult;
  failure?: string;
  configName: string;
  stopped: boolean;
}): JobConclusion {
  if (input.failure !== undefined) return { word: 'FAILED', summary: v(input.failure) };
  const result = input.result;
  if (result === undefined) return { word: 'FAILED', summary: 'the job did not run' };
  if (result.outcome === 'invalid') {
    const errors = result.problems.filter((p) => p.severity === Severity.Error).length;
    const advice = adviceSentence([invalidStickReason(input.configName, result.problems)]);
    return {
      word: 'FAILED',
      summary: `${v(input.configName)} is invalid (${errors} error${errors === 1 ? '' : 's'}), nothing was sent to any device`,
      ...(advice === undefined ? {} : { advice }),
    };
  }
  const devices = result.devices.filter((d): d is DeviceResult => d !== undefined);
  // A run a person stopped says so in its summary; the table's actions are for failures on site.
  const failed = input.stopped ? [] : devices.filter((d) => d.outcome === 'failed').map(deviceFailureReason);
  const unconfirmed = devices
    .filter(
      (d) =>
        d.outcome !== 'failed' && d.service !== undefined && !d.service.connected && d.service.kind !== 'unchecked',
    )
    .map(serviceFailureReason);
  const advice = adviceSentence([...failed, ...unconfirmed]);
  return {
    word: resultWord(devices, false),
    summary: devices.map((d) => deviceWords(d, input.stopped)).join('; '),
    ...(advice === undefined ? {} : { advice }),
  };
}

export function formatResultLine(conclusion: JobConclusion, jobId: string): string {
  // The summary is made of escaped parts already; escaped again here, since this is the one
  // writer of RESULT lines and the line must stay one line whatever a caller put in it.
  return `RESULT: ${conclusion.word}  ${v(conclusion.summary)}  [${jobId}]\n`;
}

/**
 * A wait during the networking restart, worded as the progress it is: the device is expected not
 * to answer for a while, and "connection refused" alone read as a failure to technicians.
 */
export function waitingText(elapsedMs: number, reason: string, description = ''): string {
  // Only the outage of a restart is "expected": other waits (an 802.1X port deciding, a roll-back)
  // say what they wait for in their own words.
  // The boot window at the first contact: the MP may still be booting.
  if (description === MP_BOOTING)
    return `waiting for the MP to answer (${(elapsedMs / 1000).toFixed(1)} s; it may still be booting): ${reason}`;
  if (/restart|reboot/.test(description) && !/^802\.1X /.test(reason)) {
    return `restarting: the device is not answering yet, as expected during a restart (${(elapsedMs / 1000).toFixed(1)} s; ${reason})`;
  }
  return `waiting for the device (${(elapsedMs / 1000).toFixed(1)} s): ${reason}`;
}
