import { inspect } from 'node:util';
import { createServer } from 'node:net';
import { expect } from 'vitest';
import { Secret } from '../../src/core/secret.js';
import { createAdminClient, type AdminApi, type ClientOptions, type DeviceTrust, type RetryInfo } from '../../src/client/index.js';

/** The password every client test uses: distinctive, so a leak is easy to find. */
export const PASSWORD = 'pw-Zebra-7731-never-shown';
export const BASIC = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;

export interface Recorded {
  retries: RetryInfo[];
  warnings: string[];
}

/** A client for `url` as admin/PASSWORD, recording its onRetry and onWarning calls. */
export function clientFor(url: string, trust: DeviceTrust, options: ClientOptions = {}): { api: AdminApi; seen: Recorded } {
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

/** The rejection of `promise` (fails the test if it resolves). */
export async function failureOf(promise: Promise<unknown>): Promise<Error & { code?: string; data?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return error as Error & { code?: string; data?: Record<string, unknown> };
  }
  throw new Error('expected a rejection, but the promise resolved');
}

/** A loopback port nothing listens on: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Every text a failure can show: message, data, String(), inspect with causes. */
export function textsOf(error: unknown): string[] {
  const e = error as Error & { data?: unknown };
  return [e.message, JSON.stringify(e.data ?? null), String(e), inspect(e, { depth: 8 })];
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
