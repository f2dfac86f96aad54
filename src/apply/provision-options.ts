import type { ApplyEventSink } from './apply-events.js';
import type { UpdateSecrets } from './secret-update-policy.js';

/** How one device is provisioned; the CLI's flags and the daemon's settings both end up here. */
export interface ProvisionOptions {
  dryRun: boolean;
  allowDisconnect: boolean;
  discardPending: boolean;
  rollback: boolean;
  restartTimeoutMs: number;
  /**
   * How long after a restart a port may take to authorize 802.1X, seen as an address on the
   * interface's dhcp/auto stanza; 20 s unless given (--dot1x-grace, agent.yaml timeouts.dot1x_s).
   */
  dot1xGraceMs?: number;
  /**
   * The boot window: how long an MP that refuses the connection or does not answer at the first
   * contact is waited for (it may still be booting), with a "waiting for the MP to answer" event;
   * 0 or absent: the first contact's failure is the device's (mpprov apply, at a terminal).
   */
  connectWindowMs?: number;
  /** Aborted on SIGTERM: finish the request under way, start no networking restart. */
  signal?: AbortSignal;
  /**
   * The CLI's stop: `signal` also cuts the device request under way (apply-stick passes it to the
   * client), and a device's run that it cuts ends at once with where it stopped, without a
   * take-back or roll-back (nothing more can be sent). The daemon leaves this off.
   */
  cutRequests?: boolean;
  /** Told when the device is asked to restart networking: paths measure from then on. */
  onRestartRequested?: () => void;
  onEvent: ApplyEventSink;
  /** When a secret the device already holds is sent again (secret-update-policy.ts); `on_change` unless given. */
  updateSecrets?: UpdateSecrets;
}
