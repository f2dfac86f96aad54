// Service waits of a fleet: N MPs registered UNAVAILABLE in the simulated service come back
// together; one service side waits for all of them. Per run: the appliance requests the whole wait
// sent (GET /v3/appliance and /v3/appliance/{id}) and the time from "back" to every wait ended.
// Two rows: polling only (rounds every 2 s), and with service.events (`mpprov observe` in this
// process writes events.jsonl, the side follows it; polling every 10 s is the fallback).
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServiceSide } from '../dist/apply/service-side.js';
import { Secret } from '../dist/core/secret.js';
import { runObserve } from '../dist/observe/index.js';
import { createDataApiClient } from '../dist/service/index.js';
import { startServiceSimulator } from '../dist/simulator/service/index.js';
import { judged, summarize } from './lib/stats.mjs';

const TOKEN = 'bench-service-events-token';

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function oneRun(count, withEvents) {
  const service = await startServiceSimulator({
    organizations: [{ id: 12, name: 'Branch Networks' }],
    tokens: [{ label: 'bench', value: TOKEN }],
    rateLimit: false,
  });
  const stateDir = await mkdtemp(join(tmpdir(), 'mpprov-bench-events-'));
  const stop = new AbortController();
  const api = createDataApiClient({
    url: service.url,
    credentials: { kind: 'token', token: new Secret(TOKEN) },
    caPem: service.caPem,
  });
  const port = await freePort();
  const events = {
    listen: { host: '127.0.0.1', port, text: `127.0.0.1:${port}`, loopback: true },
    publicUrl: `http://127.0.0.1:${port}/mpprov-events/`,
    checkS: 60,
  };
  let observing;
  try {
    const names = Array.from({ length: count }, (_, i) => `bench-mp-${i + 1}`);
    for (const hostname of names) service.registerAppliance({ hostname, orgId: 12, connectionStatus: 'UNAVAILABLE' });
    if (withEvents) {
      observing = runObserve({ api, events, stateDir, say: () => {}, loud: () => {}, signal: stop.signal });
      while (service.observers().length === 0) await new Promise((r) => setTimeout(r, 20));
    }
    const settings = {
      url: service.url,
      token: new Secret(TOKEN),
      caPem: service.caPem,
      waitConnectedS: 120,
      orgId: 12,
    };
    const side = createServiceSide(withEvents ? { ...settings, events } : settings, { stateDir });
    service.clearRequests();
    const waits = names.map((h) => side.watch.waitConnected(h, { waitS: 120 }));
    while ((service.requestCounts()['appliance-list'] ?? 0) === 0) await new Promise((r) => setTimeout(r, 20));
    const back = performance.now();
    for (const hostname of names) service.setConnectionStatus(hostname, 'AVAILABLE');
    const outcomes = await Promise.all(waits);
    const ms = performance.now() - back;
    if (outcomes.some((o) => o.kind !== 'connected')) throw new Error('an MP was not confirmed');
    const counts = service.requestCounts();
    side.stopEvents();
    await side.client.close();
    return { requests: (counts['appliance-list'] ?? 0) + (counts['appliance-get'] ?? 0), ms };
  } finally {
    stop.abort();
    await observing;
    await api.close();
    await service.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

export async function serviceEvents({ count = 200, runs = 3, log }) {
  const rows = {};
  for (const [name, withEvents] of [
    ['polling_only', false],
    ['with_events', true],
  ]) {
    const requests = [];
    const ms = [];
    for (let i = 0; i < runs; i++) {
      const run = await oneRun(count, withEvents);
      log(`service waits N=${count} ${name} r${i + 1}: ${run.requests} appliance request(s), ${run.ms.toFixed(0)} ms`);
      requests.push(run.requests);
      ms.push(run.ms);
    }
    const requestFigure = summarize(requests, 'count', 0);
    rows[name] = {
      appliance_requests: withEvents ? judged(requestFigure, '<=', 20, 'max') : requestFigure,
      confirmed_after_ms: summarize(ms, 'ms'),
    };
  }
  return {
    what: `${count} MPs back at once: appliance requests of the whole wait, and the time to confirm them all`,
    ...rows,
  };
}
