import type { ConnectionOutcome } from './connection-outcome.js';
import type { WaitConnectedOptions } from './connection-rounds.js';
import type { DataApi } from './data-api-client.js';
import { createServiceWatch } from './service-watch.js';

/**
 * One MP's post-check on a watch of its own: for a caller with a single MP. A run with several
 * shares one watch (createServiceWatch), so that their waits join the same rounds.
 */
export function waitUntilConnected(
  client: DataApi,
  hostname: string,
  options: WaitConnectedOptions & {
    /** Round spacing: `firstMs` between rounds (the rest is kept for callers of the per-MP loop). */
    backoff?: { firstMs: number; maxMs: number } | undefined;
  },
): Promise<ConnectionOutcome> {
  const roundMs = options.backoff?.firstMs;
  const watch = createServiceWatch(client, roundMs === undefined ? {} : { timing: { roundMs } });
  return watch.waitConnected(hostname, options);
}
