import type { ApplyEventSink } from './apply-events.js';

/** How one device is provisioned; the CLI's flags and the daemon's settings both end up here. */
export interface ProvisionOptions {
  dryRun: boolean;
  allowDisconnect: boolean;
  discardPending: boolean;
  rollback: boolean;
  restartTimeoutMs: number;
  /** Aborted on SIGTERM: finish the request under way, start no networking restart. */
  signal?: AbortSignal;
  onEvent: ApplyEventSink;
}
