import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceRig, vendorError, type ServiceRig } from './service-rig.js';

/**
 * Path data of the simulated service: first data only `pathDataMs` after the path exists and its
 * MP is AVAILABLE, a gap while the MP restarts, the 13 arrays per direction, aggregation by range
 * and age, the 20 path-days limit and pagination. Short delays (800 ms,
 * a sample a second) keep it quick; timings are asserted as bounds on element times, never on speed.
 */

const METRICS = [
  'availableCapacity',
  'dataJitter',
  'dataLoss',
  'latency',
  'mos',
  'rtt',
  'totalCapacity',
  'twampJitter',
  'twampLoss',
  'twampRtt',
  'utilizedCapacity',
  'voiceJitter',
  'voiceLoss',
];

interface Element {
  time: number;
  value: number;
}
type Arrays = Record<string, Element[]>;
interface DataRecord {
  pathId: number;
  instrumentation: string;
  aggregation: number | null;
  data: Arrays | null;
  dataInbound: Arrays | null;
  dataOutbound: Arrays | null;
}

const DELAY_MS = 800;
const RECONNECT_MS = 200;

let rig: ServiceRig;
beforeAll(async () => {
  rig = await startServiceRig({ pathDataMs: DELAY_MS, pathSampleMs: 1_000, reconnectMs: RECONNECT_MS });
  for (const name of ['mp-a', 'mp-b', 'mp-c', 'mp-many']) rig.service.registerAppliance({ hostname: name, orgId: 12 });
});
afterAll(async () => {
  await rig?.close();
});

async function createPath(source: string, target: string): Promise<number> {
  const answer = await rig.call('POST', '/api/v3/path', { body: { sourceAppliance: source, target, orgId: 12 } });
  expect(answer.status).toBe(201);
  return (answer.json as { id: number }).id;
}

async function dataOf(id: number, query = ''): Promise<DataRecord> {
  const answer = await rig.get(`/api/v3/path/${id}/data${query}`);
  expect(answer.status).toBe(200);
  return answer.json as DataRecord;
}

const statusOf = async (id: number) => ((await rig.get(`/api/v3/path/${id}/status`)).json as { status: string }).status;
const nowS = () => Math.floor(Date.now() / 1000);

/** Polls (a request every 100 ms, at most 10 s) until the path's `metric` array (data or dataOutbound) has an element. */
async function firstData(id: number, metric = 'rtt'): Promise<DataRecord> {
  for (let i = 0; i < 100; i++) {
    const record = await dataOf(id);
    if (((record.data ?? record.dataOutbound)?.[metric]?.length ?? 0) > 0) return record;
    await sleep(100);
  }
  throw new Error(`path ${id} has no data after 10 s`);
}

/** The whole second an epoch-ms instant falls in, as element times are given. */
const second = (ms: number) => Math.floor(ms / 1000);

describe('when data comes', () => {
  it('a ONE_WAY path: nothing until pathDataMs after creation, then one element per metric per sample', async () => {
    const before = Date.now();
    const id = await createPath('mp-a', '192.0.2.80');
    const empty = await dataOf(id);
    expect(empty).toMatchObject({ pathId: id, instrumentation: 'ONE_WAY', aggregation: null, dataInbound: null });
    expect(Object.keys(empty.data ?? {}).sort()).toEqual([...METRICS].sort());
    expect(Object.values(empty.data ?? {}).every((a) => a.length === 0)).toBe(true);
    expect(await statusOf(id)).toBe('INDETERMINATE');

    const first = await firstData(id);
    for (const metric of METRICS) expect(first.data?.[metric]?.length).toBeGreaterThanOrEqual(1);
    expect(first.data?.rtt?.[0]?.time).toBeGreaterThanOrEqual(second(before + DELAY_MS));
    expect(await statusOf(id)).toBe('SQA_NOT_VIOLATED');
    await sleep(2_100);
    const later = await dataOf(id);
    const times = later.data?.rtt?.map((e) => e.time) ?? [];
    expect(times.length).toBeGreaterThanOrEqual(3);
    // One element a second (the sample period), each time once.
    expect(new Set(times).size).toBe(times.length);
    // The same range read twice gives the same values.
    expect(later.data?.latency?.[0]).toEqual(first.data?.latency?.[0]);
    expect(typeof later.data?.latency?.[0]?.value).toBe('number');
  });

  it('no data while the MP is not AVAILABLE; after an outage a gap, INDETERMINATE meanwhile, then data again', async () => {
    rig.service.restartStarted('mp-b');
    const id = await createPath('mp-b', '192.0.2.81');
    await sleep(DELAY_MS + 200);
    expect((await dataOf(id)).data?.rtt).toEqual([]);
    expect(await statusOf(id)).toBe('INDETERMINATE');
    const answered = Date.now();
    rig.service.answeringAgain('mp-b');
    // AVAILABLE after reconnectMs, first data DELAY_MS later.
    const first = await firstData(id);
    expect(first.data?.rtt?.[0]?.time).toBeGreaterThanOrEqual(second(answered + RECONNECT_MS + DELAY_MS));
    await sleep(1_100);

    const outage = Date.now();
    rig.service.restartStarted('mp-b');
    expect(await statusOf(id)).toBe('INDETERMINATE');
    await sleep(1_500);
    const back = Date.now();
    rig.service.answeringAgain('mp-b');
    expect(await statusOf(id)).toBe('INDETERMINATE');
    let after: Element[] = [];
    for (let i = 0; i < 100 && !after.some((e) => e.time > second(outage)); i++) {
      await sleep(100);
      after = (await dataOf(id)).data?.rtt ?? [];
    }
    expect(await statusOf(id)).toBe('SQA_NOT_VIOLATED');
    const beforeOutage = after.filter((e) => e.time <= second(outage));
    const resumed = after.filter((e) => e.time > second(outage));
    expect(beforeOutage.length).toBeGreaterThanOrEqual(2);
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    // The gap: nothing from the outage's start until reconnectMs + DELAY_MS after the device answered.
    expect(resumed[0]?.time).toBeGreaterThanOrEqual(second(back + RECONNECT_MS + DELAY_MS));
  });

  it('a TWO_WAY path (target another simulated MP) fills dataInbound and dataOutbound', async () => {
    const id = await createPath('mp-c', 'mp-a');
    const record = await firstData(id);
    expect(record).toMatchObject({ instrumentation: 'TWO_WAY', data: null });
    for (const metric of METRICS) {
      expect(record.dataInbound?.[metric]?.length).toBeGreaterThanOrEqual(1);
      expect(record.dataOutbound?.[metric]?.length).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('ranges and aggregation', () => {
  it('the last hour by default; from/to select; aggregation by range and age', async () => {
    const id = await createPath('mp-a', 'range.example');
    await firstData(id, 'mos');
    const now = nowS();
    expect((await dataOf(id, `?from=${now - 600}&to=${now + 5}`)).data?.mos?.length).toBeGreaterThanOrEqual(1);
    expect((await dataOf(id, `?from=${now - 7200}&to=${now - 3600}`)).data?.mos).toEqual([]);
    const hourly = await dataOf(id, `?from=${now - 2 * 86_400}&to=${now}`);
    expect(hourly.aggregation).toBe(60);
    expect(hourly.data?.mos).toHaveLength(1);
    expect((hourly.data?.mos?.[0]?.time ?? 0) % 3600 === 0 || hourly.data?.mos?.[0]?.time === now - 2 * 86_400).toBe(
      true,
    );
    expect((await dataOf(id, `?from=${now - 30 * 86_400}&to=${now}`)).aggregation).toBe(1440);
    expect((await dataOf(id, `?from=${now - 40 * 86_400}&to=${now - 40 * 86_400 + 60}`)).aggregation).toBe(1440);
    expect((await dataOf(id, `?from=${now - 3 * 86_400}&to=${now - 3 * 86_400 + 60}`)).aggregation).toBe(60);
    expect((await dataOf(id, `?from=${now - 60}`)).data?.mos?.length).toBeGreaterThanOrEqual(1);
  });

  it('400 for a range that is not Unix seconds or runs backwards', async () => {
    const id = await createPath('mp-a', 'bad-range.example');
    const now = nowS();
    expect(await rig.get(`/api/v3/path/${id}/data?from=yesterday`)).toMatchObject({
      status: 400,
      json: vendorError(400, 'Bad Request', 'from and to must be Unix times in seconds'),
    });
    expect((await rig.get(`/api/v3/path/${id}/data?from=${now}&to=${now - 10}`)).json).toEqual(
      vendorError(400, 'Bad Request', 'from must not be after to'),
    );
    expect((await rig.get(`/api/v3/path/${id}/data?limit=3`)).status).toBe(400);
    expect((await rig.get('/api/v3/path/424242/data')).status).toBe(404);
  });
});

describe('GET /v3/path/data', () => {
  let ids: number[] = [];
  beforeAll(async () => {
    ids = [];
    for (let i = 0; i < 24; i++) ids.push(await createPath('mp-many', `bulk-${i}.example`));
  });
  const bulk = (query: string) => rig.get(`/api/v3/path/data?${query}`);
  const pathIds = (answer: { json: unknown }) => (answer.json as DataRecord[]).map((r) => r.pathId);

  it('records of the paths asked for; unknown ids left out; non-integers 400', async () => {
    const answer = await bulk(`orgId=12&pathIds=${ids[0]},${ids[1]},999999`);
    expect(answer.status).toBe(200);
    expect(pathIds(answer)).toEqual([ids[0], ids[1]]);
    expect((await bulk('pathIds=1,two')).status).toBe(400);
    expect((await bulk('orgId=40')).json).toEqual([]);
  });

  it('at most 20 path-days per request (per page), counted fractionally', async () => {
    const now = nowS();
    const some = (n: number) => ids.slice(0, n).join(',');
    expect((await bulk(`pathIds=${some(20)}&from=${now - 86_400}&to=${now}`)).status).toBe(200);
    const over = await bulk(`pathIds=${some(21)}&from=${now - 86_400}&to=${now}`);
    expect(over.json).toEqual(
      vendorError(400, 'Bad Request', 'At most 20 path-days per request: 21 paths x 1 days is 21'),
    );
    expect((await bulk(`pathIds=${some(2)}&from=${now - 10 * 86_400}&to=${now}`)).status).toBe(200);
    expect((await bulk(`pathIds=${some(2)}&from=${now - 10 * 86_400 - 1}&to=${now}`)).status).toBe(400);
    // Per page: 21 paths x 1 day in pages of 10 is 10 path-days a page.
    expect((await bulk(`pathIds=${some(21)}&from=${now - 86_400}&to=${now}&limit=10&page=3`)).status).toBe(200);
  });

  it('limit paths per page, pages from 1; past the end an empty page', async () => {
    const query = `pathIds=${ids.slice(0, 5).join(',')}&limit=2`;
    expect(pathIds(await bulk(`${query}&page=1`))).toEqual(ids.slice(0, 2));
    expect(pathIds(await bulk(query))).toEqual(ids.slice(0, 2));
    expect(pathIds(await bulk(`${query}&page=2`))).toEqual(ids.slice(2, 4));
    expect(pathIds(await bulk(`${query}&page=3`))).toEqual(ids.slice(4, 5));
    expect(pathIds(await bulk(`${query}&page=4`))).toEqual([]);
    for (const bad of ['limit=0', 'limit=x', 'page=0', 'page=-1', 'limit=2&limit=3']) {
      expect((await bulk(bad)).status).toBe(400);
    }
  });
});
