import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceSide } from '../../src/apply/service-side.js';
import { Secret } from '../../src/core/secret.js';
import { RIG_TOKEN, startServiceRig, type ServiceRig } from '../simulator/service-rig.js';
import { freePort, removeState, startObserve, type ObserveRun } from './observe-rig.js';

/**
 * Events end a fleet's waits: 200 MPs come back, `mpprov observe` writes their AVAILABLE events,
 * the watch's hints bring a round forward, and one list per organization confirms them all. The
 * polling fallback is 10 s: every wait here ends long before a second regular round.
 */

const FLEET = 200;
let rig: ServiceRig;
let run: ObserveRun;

beforeAll(async () => {
  rig = await startServiceRig();
  await rig.call('DELETE', '/api/v3/observer');
  for (let i = 1; i <= FLEET; i++)
    rig.service.registerAppliance({ hostname: `ev-mp-${i}`, orgId: 12, connectionStatus: 'UNAVAILABLE' });
  const port = await freePort();
  run = await startObserve(rig, { listenPort: port, publicPort: port, checkS: 60 });
  for (let i = 0; i < 100 && ((await rig.get('/api/v3/observer')).json as unknown[]).length === 0; i++)
    await new Promise((r) => setTimeout(r, 50));
});
afterAll(async () => {
  await run?.stop();
  await rig?.close();
  if (run !== undefined) await removeState(run.stateDir);
});

describe('events in the waits', () => {
  it('confirms 200 MPs from their AVAILABLE events with at most 20 appliance requests, each confirmed by the service', async () => {
    const side = createServiceSide(
      {
        url: rig.service.url,
        token: new Secret(RIG_TOKEN),
        caPem: rig.service.caPem,
        waitConnectedS: 60,
        orgId: 12,
        events: {
          listen: { host: '127.0.0.1', port: 1, text: '127.0.0.1:1', loopback: true },
          publicUrl: 'https://unused.invalid/',
          checkS: 60,
        },
      },
      { stateDir: run.stateDir },
    );
    try {
      rig.service.clearRequests();
      const names = Array.from({ length: FLEET }, (_, i) => `ev-mp-${i + 1}`);
      const waits = names.map((h) => side.watch.waitConnected(h, { waitS: 60 }));
      // The first regular round finds them UNAVAILABLE; then they come back.
      for (let i = 0; i < 100 && (rig.service.requestCounts()['appliance-list'] ?? 0) === 0; i++)
        await new Promise((r) => setTimeout(r, 20));
      const back = Date.now();
      for (const h of names) rig.service.setConnectionStatus(h, 'AVAILABLE');
      const outcomes = await Promise.all(waits);
      expect(outcomes.map((o) => o.kind)).toEqual(names.map(() => 'connected'));
      // Ended by the events, well before the 10 s fallback round.
      expect(Date.now() - back).toBeLessThan(9_000);
      const counts = rig.service.requestCounts();
      const applianceRequests = (counts['appliance-list'] ?? 0) + (counts['appliance-get'] ?? 0);
      expect(applianceRequests).toBeGreaterThanOrEqual(2);
      expect(applianceRequests).toBeLessThanOrEqual(20);
    } finally {
      side.stopEvents();
      await side.client.close();
    }
  });
});
