import { afterEach, describe, expect, it } from 'vitest';
import type { DataApi } from '../../src/service/index.js';
import { json, startHostileService, type HostileAnswer, type HostileService } from '../support/hostile-service.js';
import { clientOf } from './service-fixtures.js';

/**
 * `/v3/observer` against a service that answers DELETE as the model leaves it open: 200 (or
 * another 2xx) with whatever body, or none. The DELETE is done once the status says so; reading
 * its body as JSON would stop a rebuild after every configuration was deleted and before any was
 * posted back.
 */

const services: HostileService[] = [];
const clients: DataApi[] = [];

afterEach(async () => {
  for (const api of clients.splice(0)) await api.close();
  for (const service of services.splice(0)) await service.close();
});

/** A service holding the caller's configurations, whose DELETE answers `deleted` once they are gone. */
async function observerService(deleted: HostileAnswer): Promise<{ api: DataApi; held: () => unknown[] }> {
  let held: unknown[] = [{ url: 'https://alerts.example.net/hooks/1', webAlertEvents: true, blacklisted: false }];
  const service = await startHostileService((req) => {
    if (req.path !== '/v3/observer') return { status: 404, body: '' };
    if (req.method === 'GET') return json(held);
    if (req.method === 'DELETE') {
      held = [];
      return deleted;
    }
    return { status: 405, body: '' };
  });
  services.push(service);
  const { api } = clientOf(service);
  clients.push(api);
  return { api, held: () => held };
}

describe('DELETE /v3/observer', () => {
  it.each([
    ['200 with no body', { status: 200, body: '' }],
    ['204 No Content', { status: 204, body: '' }],
    ['200 with a text body', { status: 200, body: 'OK', headers: { 'content-type': 'text/plain' } }],
    ['200 with a JSON body', json({ deleted: 1 })],
  ] as const)('is done on %s', async (_name, answer) => {
    const { api, held } = await observerService(answer);
    await expect(api.deleteObservers()).resolves.toBeUndefined();
    expect(held()).toEqual([]);
    expect(await api.listObservers()).toEqual([]);
  });

  it('still fails on an error status, with the service error of that status', async () => {
    const { api } = await observerService({
      status: 500,
      body: JSON.stringify({ httpStatusCode: 500, messages: ['Internal server error'] }),
    });
    await expect(api.deleteObservers()).rejects.toMatchObject({
      code: 'MPPROV_SERVICE_INTERNAL_ERROR',
      data: { status: 500, method: 'DELETE', path: '/v3/observer' },
    });
  });
});
