import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceSide } from '../../src/apply/service-side.js';
import { Secret } from '../../src/core/secret.js';
import { createEventsLog } from '../../src/observe/events-log.js';
import { RIG_TOKEN, startServiceRig, type ServiceRig } from '../simulator/service-rig.js';
import { removeState } from './observe-rig.js';

/**
 * Events carry no signature: whoever learns the receiver's URL can post AVAILABLE for an MP that
 * is still down, over and over. The wait must not end on it (only the service's answer ends it),
 * and the stream must not become a poll storm on the service's request budget.
 */

let rig: ServiceRig;
let stateDir: string;

beforeAll(async () => {
  rig = await startServiceRig();
  rig.service.registerAppliance({ hostname: 'forged-mp', orgId: 12, connectionStatus: 'UNAVAILABLE' });
  stateDir = await mkdtemp(join(tmpdir(), 'mpprov-forged-'));
});
afterAll(async () => {
  await rig?.close();
  await removeState(stateDir);
});

describe('a stream of forged AVAILABLE events for an MP still down', () => {
  it('neither ends the wait nor makes the watch ask the service at the pace of the forgeries', async () => {
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
      { stateDir },
    );
    const log = createEventsLog(stateDir);
    const forged = { type: 'SEQUENCER_EVENT', sequencerName: 'forged-mp', sequencerStatus: 'AVAILABLE' };
    let forging = true;
    let forgeries = 0;
    const forger = (async () => {
      while (forging) {
        await log.append({ received: new Date().toISOString(), event: forged });
        forgeries += 1;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      rig.service.clearRequests();
      const outcome = await side.watch.waitConnected('forged-mp', { waitS: 6 });
      expect(outcome.kind).not.toBe('connected');
      expect(forgeries).toBeGreaterThan(20);
      const counts = rig.service.requestCounts();
      const asked = (counts['appliance-list'] ?? 0) + (counts['appliance-get'] ?? 0);
      // The first regular round, one hinted look, the deadline's last look: never one per forgery.
      expect(asked).toBeGreaterThanOrEqual(2);
      expect(asked).toBeLessThanOrEqual(4);
    } finally {
      forging = false;
      await forger;
      side.stopEvents();
      await side.client.close();
    }
  }, 20_000);
});
