import type { DeviceTrust } from '../admin-api/device-trust.js';
import type { Secret } from '../core/secret.js';

export interface DeviceTarget {
  /** `https://host[:port]`, no path. */
  url: string;
  username: string;
  password: Secret;
  trust: DeviceTrust;
}

export interface RetryInfo {
  method: string;
  /** Relative to /api/v1, with the query. */
  path: string;
  /** The attempt that failed (1 = the first). */
  attempt: number;
  reason: string;
  delayMs: number;
}

export interface ClientOptions {
  /** TCP and TLS handshake, default 10 000 ms. */
  connectTimeoutMs?: number;
  /** Overall deadline of one HTTP exchange (each retry gets its own), default 30 000 ms. */
  requestTimeoutMs?: number;
  /** Called once at creation for a dangerous setting (TLS verification off). */
  onWarning?: (message: string) => void;
  onRetry?: (info: RetryInfo) => void;
  /**
   * Cuts every request of this client, the one under way included, and every pause between
   * retries; they reject with the signal's reason. The CLI passes its SIGTERM/SIGINT signal here (a
   * person asked to stop now); the daemon does not (it finishes the request under way).
   */
  signal?: AbortSignal;
}
