import { type ConnectionOutcome, type ConnectionProgress, type DataApi, waitUntilConnected } from '../service/index.js';
import { type ApplyEventSink, type DeviceResult, Outcome } from './apply-events.js';

/**
 * The post-check of docs/service-model.md, for one device of a run: after its restart and
 * verification (provisionDevice has returned), ask the monitoring service until it lists the MP
 * as AVAILABLE or the wait runs out. Its outcome is reported beside the device's, never instead
 * of it: a service problem never fails, delays beyond the wait, or rolls back a device.
 *
 * Which results are checked: `changed` (the restart took the MP off the service), and also
 * `no-change`. A technician who re-inserts a stick after a site visit gets NO CHANGE, and wants
 * to know the MP is connected too; it costs one poll when it is. A failed device is not checked
 * (its configuration is not what the stick says), nor is a dry run (nothing was sent).
 */

export interface PostCheckTarget {
  client: DataApi;
  waitS: number;
  /** Backoff between polls, for tests; default waitUntilConnected's. */
  backoff?: { firstMs: number; maxMs: number } | undefined;
}

export function wantsPostCheck(result: DeviceResult): boolean {
  return result.outcome === Outcome.Changed || result.outcome === Outcome.NoChange;
}

export async function servicePostCheck(
  target: PostCheckTarget,
  device: string,
  hostname: string,
  options: { signal?: AbortSignal | undefined; onEvent: ApplyEventSink },
): Promise<ConnectionOutcome> {
  const { onEvent } = options;
  onEvent({ type: 'service-check-start', device, hostname, url: target.client.url, waitS: target.waitS });
  const started = Date.now();
  let outcome: ConnectionOutcome;
  try {
    outcome = await waitUntilConnected(target.client, hostname, {
      waitS: target.waitS,
      signal: options.signal,
      backoff: target.backoff,
      onProgress: (progress) =>
        onEvent({
          type: 'service-waiting',
          device,
          hostname,
          elapsedMs: progress.elapsedMs,
          reason: progressReason(progress),
        }),
    });
  } catch {
    // Only the run's signal ends the wait by throwing: the agent is shutting down.
    outcome = {
      kind: 'unchecked',
      connected: false,
      hostname,
      sentence: 'not confirmed: the check was stopped because mpprov is shutting down',
      waitedMs: Date.now() - started,
      polls: 0,
    };
  }
  onEvent({ type: 'service-check-done', device, outcome });
  return outcome;
}

function progressReason(progress: ConnectionProgress): string {
  if (progress.failure !== undefined)
    return `the service did not answer usefully (${progress.failure.message}); asking again`;
  if (progress.status === 'absent') return `the service lists no MP "${progress.hostname}" yet`;
  return `the service says ${progress.status ?? 'nothing yet'}`;
}
