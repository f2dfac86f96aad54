import { afterEach, describe, expect, it } from 'vitest';
import { createServiceWatch, type DataApi } from '../../src/service/index.js';
import { json, startHostileService, type HostileAnswer, type HostileService } from '../support/hostile-service.js';
import { clientOf } from './service-fixtures.js';

/**
 * `POST /v3/path` answered 201 with something that is not the path asked for: the service made a
 * path all the same, so mpprov reads what exists from a fresh list and never POSTs again.
 */

const services: HostileService[] = [];
const clients: DataApi[] = [];

afterEach(async () => {
  for (const api of clients.splice(0)) await api.close();
  for (const service of services.splice(0)) await service.close();
});

const FAST = { roundMs: 150, minGapMs: 50, lastAnswerGraceMs: 500 };
const MP = { id: 9, name: 'branch-mp1', resolvedIp: '198.51.100.7', connectionStatus: 'AVAILABLE', orgId: 12 };
const REAL = { id: 601, sourceAppliance: 'branch-mp1', target: '192.0.2.80', orgId: 12 };

async function createAnswered(created: HostileAnswer) {
  let exists = false;
  const service = await startHostileService((req) => {
    if (req.path.startsWith('/v3/appliance')) return json([MP]);
    if (req.method === 'POST' && req.path === '/v3/path') {
      exists = true;
      return created;
    }
    if (req.path.startsWith('/v3/path/data'))
      return json(
        exists && req.path.includes('601')
          ? [{ pathId: 601, data: { delay: [{ time: Date.now() / 1000, value: 3 }] } }]
          : [],
      );
    if (req.path.startsWith('/v3/path/status')) return json([{ pathId: 601, status: 'SQA_NOT_VIOLATED' }]);
    if (req.path.startsWith('/v3/path?')) return json(exists ? [REAL] : []);
    return { status: 404, body: '' };
  });
  services.push(service);
  const { api } = clientOf(service);
  clients.push(api);
  const watch = createServiceWatch(api, { timing: FAST });
  const outcomes = await watch.ensurePaths(MP, [{ target: '192.0.2.80' }], { waitS: 3 });
  return { outcomes, posts: service.requests().filter((r) => r.method === 'POST') };
}

describe('a create answered with something else', () => {
  it.each([
    [
      'another path',
      { status: 201, body: JSON.stringify({ id: 999, sourceAppliance: 'hq-mp7', target: '203.0.113.9' }) },
    ],
    ['a body that is not JSON', { status: 201, body: '\u001b[2Jcreated!' }],
    ['JSON of the wrong shape', { status: 201, body: JSON.stringify({ id: 'six hundred and one' }) }],
  ] as const)('%s: the path the list shows, created once, measuring', async (_, answer) => {
    const { outcomes, posts } = await createAnswered(answer);
    expect(posts).toHaveLength(1);
    expect(outcomes).toEqual([
      expect.objectContaining({ target: '192.0.2.80', id: 601, created: true, measuring: true }),
    ]);
  });
});
