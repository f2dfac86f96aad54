import { afterEach, describe, expect, it } from 'vitest';
import { createServiceWatch, reportMpPaths, type DataApi } from '../../src/service/index.js';
import { json, startHostileService, type HostileRoute, type HostileService } from '../support/hostile-service.js';
import { clientOf, expectNoSecret, TOKEN } from './service-fixtures.js';

/**
 * Records a lying service sends inside answers of the right overall shape: a record of the wrong
 * types beside good ones, unknown fields that are deep, huge or echo the token, data times no
 * clock can show. None may cost the other MPs their answer, nor crash whoever prints the result.
 */

const services: HostileService[] = [];
const clients: DataApi[] = [];

afterEach(async () => {
  for (const api of clients.splice(0)) await api.close();
  for (const service of services.splice(0)) await service.close();
});

async function hostile(route: HostileRoute): Promise<{ service: HostileService; api: DataApi }> {
  const service = await startHostileService(route);
  services.push(service);
  const { api } = clientOf(service);
  clients.push(api);
  return { service, api };
}

const FAST = { roundMs: 150, minGapMs: 50, lastAnswerGraceMs: 500 };
const GOOD = { id: 9, name: 'branch-mp1', resolvedIp: '198.51.100.7', connectionStatus: 'AVAILABLE' };
const DEPTH = 200_000;

describe('appliance lists with records of the wrong shape', () => {
  it('one unreadable record (id as a string, a status that is an object) costs only itself', async () => {
    const { api } = await hostile((req) =>
      req.path.startsWith('/v3/appliance')
        ? json([
            { id: '7', name: 'other-mp', connectionStatus: 'AVAILABLE' },
            { id: 8, name: 'branch-mp2', connectionStatus: { up: true } },
            GOOD,
          ])
        : { status: 404, body: '' },
    );
    const watch = createServiceWatch(api, { timing: FAST });
    const outcome = await watch.waitConnected('branch-mp1', { waitS: 3 });
    expect(outcome).toMatchObject({ kind: 'connected', appliance: { id: 9, name: 'branch-mp1' } });
  });

  it('a list where no record is readable is still an answer of the wrong shape', async () => {
    const { api } = await hostile(() => json([{ id: '7', name: 'branch-mp1', connectionStatus: 'AVAILABLE' }]));
    const outcome = await createServiceWatch(api, { timing: FAST }).waitConnected('branch-mp1', { waitS: 3 });
    expect(outcome.kind).toBe('unreachable');
    expect(outcome.sentence).toContain('does not have the expected shape: [0].id: expected number, received string');
  });

  it('unknown fields (deeply nested, 1 MiB long, the token echoed) stay out of the outcome, which prints as JSON', async () => {
    // Built as text: the nesting is deeper than JSON.stringify itself could write.
    const deep = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
    const record = JSON.stringify({
      ...GOOD,
      name: 'branch-mp1',
      echo: `Token ${TOKEN}`,
      padding: 'x'.repeat(1024 * 1024),
    }).replace(/}$/, `,"deep":${deep}}`);
    const { api } = await hostile(() => ({ status: 200, body: `[${record}]` }));
    const outcome = await createServiceWatch(api, { timing: FAST }).waitConnected('branch-mp1', { waitS: 3 });
    expect(outcome.kind).toBe('connected');
    // What `apply --json` and the result files do with it.
    const printed = JSON.stringify(outcome);
    expect(printed.length).toBeLessThan(2_000);
    expect(Object.keys(outcome.appliance ?? {}).sort()).toEqual(['connectionStatus', 'id', 'name', 'resolvedIp']);
    expectNoSecret([printed], [TOKEN]);
  });
});

describe('path data from a service with a clock of its own', () => {
  it('a data time no date can hold is not a last-data time', async () => {
    const { api } = await hostile((req) => {
      if (req.path.startsWith('/v3/appliance')) return json([{ ...GOOD, orgId: 12 }]);
      if (req.path.startsWith('/v3/path/status')) return json([{ pathId: 501, status: 'SQA_NOT_VIOLATED' }]);
      if (req.path.startsWith('/v3/path/data'))
        return json([
          {
            pathId: 501,
            data: {
              delay: [
                { time: 1e300, value: 1 },
                { time: -1e20, value: 2 },
              ],
            },
          },
        ]);
      if (req.path.startsWith('/v3/path'))
        return json([{ id: 501, sourceAppliance: 'BRANCH-MP1', target: '192.0.2.80', orgId: 12 }]);
      return { status: 404, body: '' };
    });
    const report = await reportMpPaths(api, 'branch-mp1');
    expect(report).toMatchObject({ known: true, paths: [{ id: 501, target: '192.0.2.80' }] });
    const [path] = report.known ? report.paths : [];
    // `mpprov service paths` prints it as a date: a time past Date's range threw RangeError there.
    expect(path?.lastDataAt).toBeUndefined();
  });
});
