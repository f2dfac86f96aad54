import { afterEach, describe, expect, it } from 'vitest';
import type { DataApi } from '../../src/service/index.js';
import { json, startHostileService, type HostileService } from '../support/hostile-service.js';
import { clientOf } from './service-fixtures.js';

/**
 * 429s whose Retry-After no honest service sends: a negative number is no date (Date.parse reads
 * `-86400` as the year 86400, `-5` as 2001): the request is asked again after the default second.
 */

const services: HostileService[] = [];
const clients: DataApi[] = [];

afterEach(async () => {
  for (const api of clients.splice(0)) await api.close();
  for (const service of services.splice(0)) await service.close();
});

async function askedAfter(retryAfter: string): Promise<{ delays: number[]; organizations: unknown }> {
  let limited = false;
  const service = await startHostileService(() => {
    if (limited) return json([{ id: 12, displayName: 'Branch Networks' }]);
    limited = true;
    return {
      status: 429,
      headers: { 'retry-after': retryAfter },
      body: JSON.stringify({ httpStatusCode: 429, messages: ['Too Many Requests'] }),
    };
  });
  services.push(service);
  const { api, retries } = clientOf(service);
  clients.push(api);
  const organizations = await api
    .listOrganizations({ signal: AbortSignal.timeout(10_000) })
    .catch((error: unknown) => error);
  return { delays: retries.map((r) => r.delayMs), organizations };
}

describe('Retry-After from a hostile service', () => {
  it.each(['-86400', '-5', '-1.5'])('%s is not a date: the default second', async (retryAfter) => {
    const { delays, organizations } = await askedAfter(retryAfter);
    expect(delays).toEqual([1_000]);
    expect(organizations).toEqual([{ id: 12, displayName: 'Branch Networks' }]);
  });
});
