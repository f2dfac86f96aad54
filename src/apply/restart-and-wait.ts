import type { DeviceInterface } from '../admin-api/index.js';
import {
  DeviceCertificateError,
  DeviceUnreachableError,
  DevicePinMismatchError,
  type AdminApi,
  type DeviceError,
} from '../client/index.js';
import { ErrorCode, MpprovError } from '../core/errors.js';
import { configFields, normaliseFields } from '../plan/index.js';
import { byCodeUnit } from '../core/index.js';

/** How long a device may keep answering after accepting a restart before it goes down. */
const OUTAGE_START_GRACE_MS = 5_000;
/** Probe failures come every 10-50 ms during an outage; the progress display and job log need one a second. */
const REPORT_EVERY_MS = 1_000;

/**
 * Restarts networking and rides out the outage (resets and refused connections are expected),
 * probing every 50 ms from the 202 on (knocking every 5 ms while the port refuses) (the client's waitUntilAnswering). Done at the first
 * answer whose active view shows the new configuration, or, once the device was seen going down
 * (a refused or reset connection), at its first answer again: a restart that did not take is
 * verify-active's to report. An answer with the old configuration before the device went down
 * ends nothing, unless the device has not gone down within OUTAGE_START_GRACE_MS.
 * Returns the active view of that answer, fresh from the device: verifying it needs no second
 * request (after the outage that one would also pay a new connection and TLS handshake).
 */
export async function restartAndWait(
  api: AdminApi,
  timeoutMs: number,
  onWait: (reason: string, elapsedMs: number) => void,
  signal: AbortSignal | undefined,
  hasRestarted: (active: DeviceInterface[]) => boolean,
  /** Called once the device accepted the restart: a stop from now on must say it may be restarting. */
  onRequested?: () => void,
): Promise<DeviceInterface[]> {
  // Any change of the active configuration also shows the restart happened (even a wrong one).
  const before = configurationOf(await api.listInterfaces('active'));
  await api.restartNetworking();
  // The wait for the device starts at its 202: a restart request that waited out 429s (Retry-After,
  // up to a minute each) must not use up the time the device has to come back.
  const started = Date.now();
  onRequested?.();
  // At most half the wait: a restart that kept the configuration (pending stuck) with an outage
  // shorter than the probe interval is only seen as an unchanged answer, and a grace as long as
  // the wait would leave no probe after it, reporting a device that answers as lost.
  const graceMs = Math.min(OUTAGE_START_GRACE_MS, timeoutMs / 2);
  let wentDown = false;
  let reported: { at: number; reason: string } | undefined;
  const onAttempt = (_elapsedMs: number, reason: string, failure: DeviceError): void => {
    // A refused or reset connection is the outage itself; a timeout may only be a slow answer.
    if (failure instanceof DeviceUnreachableError) wentDown = true;
    const at = Date.now() - started;
    if (reported !== undefined && reported.reason === reason && at - reported.at < REPORT_EVERY_MS) return;
    reported = { at, reason };
    onWait(reason, at);
  };
  try {
    return await api.waitUntilAnswering({
      timeoutMs: Math.max(1, timeoutMs - (Date.now() - started)),
      onAttempt,
      until: (view) =>
        wentDown || hasRestarted(view) || configurationOf(view) !== before || Date.now() - started >= graceMs,
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (error) {
    if (signal?.aborted === true) throw new RestartWaitAbortedError(error);
    // The pin no longer matches, or the configured CA did not issue what the device presents now:
    // the device (or something in its place) came back with another certificate. The connector
    // refused it before a request byte left, so no credentials went over that connection; "did
    // not answer" would send the technician to the switch-port lights.
    if (error instanceof DevicePinMismatchError || error instanceof DeviceCertificateError)
      throw new CertificateChangedError(error);
    throw new DeviceLostError(timeoutMs, error);
  }
}

/** The configuration in a view, without what changes on its own (addresses in use, 802.1X state). */
function configurationOf(view: readonly DeviceInterface[]): string {
  return JSON.stringify(
    [...view]
      .sort((a, b) => byCodeUnit(a.name, b.name))
      .map((iface) => [
        iface.name,
        Object.entries(iface.families).map(([family, stanza]) => [
          family,
          stanza == null ? null : normaliseFields(configFields(stanza)),
        ]),
      ]),
  );
}

export class DeviceLostError extends MpprovError {
  constructor(
    readonly timeoutMs: number,
    cause: unknown,
  ) {
    super(
      ErrorCode.DeviceUnreachable,
      `the device did not answer again within ${Math.round(timeoutMs / 1000)} s after the networking restart`,
      { cause },
    );
    this.name = 'DeviceLostError';
  }
}

/** After the restart the device presents a certificate other than the pinned one, or one its CA did not issue. */
export class CertificateChangedError extends MpprovError {
  constructor(cause: DevicePinMismatchError | DeviceCertificateError) {
    super(
      cause.code,
      cause instanceof DevicePinMismatchError
        ? `the device presents a different certificate since the restart: expected ${cause.data.pinned}, got ${cause.data.presented}; possible interception`
        : `the device presents a different certificate since the restart: ${cause.message}; possible interception`,
      { cause },
    );
    this.name = 'CertificateChangedError';
  }
}

/** The agent is shutting down while a device restarts: we stop watching, the device goes on. */
export class RestartWaitAbortedError extends MpprovError {
  constructor(cause: unknown) {
    super(
      ErrorCode.ApplyFailed,
      'stopped waiting for the device because the agent is shutting down; the networking restart was already under way, so check the device when the agent runs again',
      { cause },
    );
    this.name = 'RestartWaitAbortedError';
  }
}

/** The agent is shutting down before a restart step: the restart is not started at all. */
export class RestartSkippedError extends MpprovError {
  constructor() {
    super(ErrorCode.ApplyFailed, 'the agent is shutting down: networking was not restarted');
    this.name = 'RestartSkippedError';
  }
}
