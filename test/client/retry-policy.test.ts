import { describe, expect, it } from 'vitest';
import { backoffMs, mayRetry } from '../../src/client/retry-policy.js';
import { retryAfterMs, TimeoutError, UnreachableError, type ConnectionProblem } from '../../src/http/index.js';

const unreachable = (problem: ConnectionProblem, requestSent: boolean) =>
  new UnreachableError('device', { url: 'https://192.0.2.1', method: 'GET', path: '/x', problem, requestSent });
const timeout = new TimeoutError('device', {
  url: 'https://192.0.2.1',
  method: 'GET',
  path: '/x',
  phase: 'response',
  timeoutMs: 1000,
});

describe('retry policy', () => {
  it('retries a GET on refused, reset, closed and timeouts, a few times', () => {
    for (const error of [
      unreachable('refused', false),
      unreachable('reset', true),
      unreachable('closed', true),
      timeout,
    ]) {
      expect(mayRetry('GET', error, 1)).toBe(true);
      expect(mayRetry('GET', error, 3)).toBe(false);
    }
    expect(mayRetry('GET', unreachable('name-not-found', false), 1)).toBe(false);
  });

  it('retries a write only when nothing was sent', () => {
    expect(mayRetry('POST', unreachable('refused', false), 1)).toBe(true);
    expect(mayRetry('PUT', unreachable('reset', true), 1)).toBe(false);
    expect(mayRetry('DELETE', unreachable('closed', true), 1)).toBe(false);
    expect(mayRetry('POST', timeout, 1)).toBe(false);
  });

  it('backs off 250 ms doubling to 2 s', () => {
    expect([1, 2, 3, 4, 5, 6].map(backoffMs)).toEqual([250, 500, 1000, 2000, 2000, 2000]);
  });

  it('reads Retry-After as seconds or an HTTP date, defaulting to 1 s and capped at 60 s', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('0', now)).toBe(0);
    expect(retryAfterMs('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
    expect(retryAfterMs(undefined, now)).toBe(1000);
    expect(retryAfterMs('soon', now)).toBe(1000);
    expect(retryAfterMs('3600', now)).toBe(60_000);
    expect(retryAfterMs(['2', '9'], now)).toBe(2000);
  });
});
