import type { DeviceInterface } from '../admin-api/index.js';
import type { AdminApi } from '../client/index.js';
import { DevicePinMismatchError, ErrorCode, MpprovError } from '../core/errors.js';
import { configFields, normaliseFields } from '../plan/index.js';

/** How long a device may keep answering after accepting a restart before it goes down. */
const OUTAGE_START_GRACE_MS = 5_000;

/**
 * Restarts networking and rides out the outage (resets and refused connections are expected).
 * Done when the active view shows the new configuration, or when the device was seen going down
 * and answers again. Either keeps us from reading the old configuration back in the moment
 * before the device goes down.
 */
export async function restartAndWait(
  api: AdminApi,
  timeoutMs: number,
  onWait: (reason: string, elapsedMs: number) => void,
  signal: AbortSignal | undefined,
  hasRestarted: (active: DeviceInterface[]) => boolean,
  /** Called once the device accepted the restart: a stop from now on must say it may be restarting. */
  onRequested?: () => void,
): Promise<void> {
  const started = Date.now();
  // Any change of the active configuration also shows the restart happened (even a wrong one).
  const before = configurationOf(await api.listInterfaces('active'));
  await api.restartNetworking();
  onRequested?.();
  const graceEnd = started + Math.min(OUTAGE_START_GRACE_MS, timeoutMs);
  while (Date.now() < graceEnd) {
    try {
      const view = await api.listInterfaces('active');
      if (hasRestarted(view) || configurationOf(view) !== before) return;
    } catch (error) {
      // A changed certificate is not an outage: say so at once, and send nothing more to it.
      if (error instanceof DevicePinMismatchError) throw new CertificateChangedError(error);
      break; // it went down: the restart is under way
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const remaining = Math.max(1, timeoutMs - (Date.now() - started));
  try {
    await api.waitUntilAnswering({
      timeoutMs: remaining,
      onAttempt: (_elapsedMs, reason) => onWait(reason, Date.now() - started),
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (error) {
    if (signal?.aborted === true) throw new RestartWaitAbortedError(error);
    // The pin no longer matches: the device (or something in its place) came back with another
    // certificate. The connector refused it before a request byte left, so no credentials went
    // over that connection; "did not answer" would send the technician to the switch-port lights.
    if (error instanceof DevicePinMismatchError) throw new CertificateChangedError(error);
    throw new DeviceLostError(timeoutMs, error);
  }
}

/** The configuration in a view, without what changes on its own (addresses in use, 802.1X state). */
function configurationOf(view: readonly DeviceInterface[]): string {
  return JSON.stringify(
    [...view]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((iface) => [iface.name, Object.entries(iface.families).map(([family, stanza]) => [family, stanza == null ? null : normaliseFields(configFields(stanza))])]),
  );
}

export class DeviceLostError extends MpprovError {
  constructor(readonly timeoutMs: number, cause: unknown) {
    super(ErrorCode.DeviceUnreachable, `the device did not answer again within ${Math.round(timeoutMs / 1000)} s after the networking restart`, { cause });
    this.name = 'DeviceLostError';
  }
}

/** After the restart the device presents a certificate other than the pinned one. */
export class CertificateChangedError extends MpprovError {
  readonly expected: string;
  readonly presented: string;

  constructor(cause: DevicePinMismatchError) {
    super(
      ErrorCode.DevicePinMismatch,
      `the device presents a different certificate since the restart: expected ${cause.data.pinned}, got ${cause.data.presented}; possible interception`,
      { cause },
    );
    this.name = 'CertificateChangedError';
    this.expected = cause.data.pinned;
    this.presented = cause.data.presented;
  }
}

/** The agent is shutting down while a device restarts: we stop watching, the device goes on. */
export class RestartWaitAbortedError extends MpprovError {
  constructor(cause: unknown) {
    super(ErrorCode.ApplyFailed, 'stopped waiting for the device because the agent is shutting down; the networking restart was already under way, so check the device when the agent runs again', { cause });
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
