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
}
