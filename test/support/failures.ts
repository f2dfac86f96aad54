import { createServer } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, expect } from 'vitest';

/** What the client tests of both APIs (device and service) need to look at failures, and to close what they opened. */

/** The rejection of `promise` (fails the test if it resolves). */
export async function failureOf(
  promise: Promise<unknown>,
): Promise<Error & { code?: string; data?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return error as Error & { code?: string; data?: Record<string, unknown> };
  }
  throw new Error('expected a rejection, but the promise resolved');
}

/** Every text a failure can show: message, data, String(), inspect with causes. */
export function textsOf(value: unknown): string[] {
  const e = value as (Error & { data?: unknown }) | undefined;
  return [String(e?.message), JSON.stringify(e?.data ?? null), String(e), inspect(e, { depth: 8 })];
}

/** A loopback port nothing listens on: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface CloseLater {
  <T extends { close(): unknown }>(thing: T): T;
  /** For a thing that holds what to close (a client with its recorder): how to close it. */
  <T>(thing: T, close: (thing: T) => unknown): T;
}

/**
 * For servers and clients a file (or describe block) opens as it goes: `closeLater(thing)` returns
 * the thing and closes it after all the tests, newest first, whatever happened.
 */
export function useCloseAfterAll(): CloseLater {
  const closers: (() => unknown)[] = [];
  afterAll(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  return <T>(thing: T, close: (thing: T) => unknown = (t) => (t as { close(): unknown }).close()): T => {
    closers.push(() => close(thing));
    return thing;
  };
}
