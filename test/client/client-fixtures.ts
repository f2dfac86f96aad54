import { expect } from 'vitest';
import { Secret } from '../../src/core/secret.js';
import {
  createAdminClient,
  type AdminApi,
  type ClientOptions,
  type DeviceTrust,
  type RetryInfo,
} from '../../src/client/index.js';

/** The password every client test uses: distinctive, so a leak is easy to find. */
export const PASSWORD = 'pw-Zebra-7731-never-shown';
export const BASIC = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;

export interface Recorded {
  retries: RetryInfo[];
  warnings: string[];
}

/** A client for `url` as admin/PASSWORD, recording its onRetry and onWarning calls. */
export function clientFor(
  url: string,
  trust: DeviceTrust,
  options: ClientOptions = {},
): { api: AdminApi; seen: Recorded } {
  const seen: Recorded = { retries: [], warnings: [] };
  const api = createAdminClient(
    { url, username: 'admin', password: new Secret(PASSWORD), trust },
    {
      connectTimeoutMs: 2_000,
      requestTimeoutMs: 5_000,
      onRetry: (info) => seen.retries.push(info),
      onWarning: (message) => seen.warnings.push(message),
      ...options,
    },
  );
  return { api, seen };
}

export function expectNoSecret(texts: readonly string[]): void {
  // Searching nothing proves nothing.
  expect(texts.length).toBeGreaterThan(0);
  const base64 = Buffer.from(`admin:${PASSWORD}`).toString('base64');
  for (const text of texts) {
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain(base64);
  }
}
