import { describe, expect, it } from 'vitest';
import { applyFile } from './apply-helpers.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig } from '../support/stick-workspace.js';

/**
 * A device that answers the restart with 429 (its limit on service actions) and Retry-After: the
 * client waits and asks again, and the time the device then has to come back starts at its 202.
 * Seen in the fault matrix: two 1 s waits used up a 2 s restart timeout, and a device that
 * restarted normally was reported as lost ("did not answer again within 2 s").
 */

const { start } = useSimulators(PROFILE_DEVICE);
const dhcpEth1 = '    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n';

describe('a restart the device accepts only after 429s', () => {
  it('is waited for from the 202 on: the restart timeout is not spent on Retry-After', async () => {
    const device = await start({ faults: ['throttle=1s,times=2@PUT /api/v1/service/*'] });
    const { result, events } = await applyFile(stickWithConfig(stickHead(device, dhcpEth1)), {
      restartTimeoutMs: 1_500,
    });
    const mp = result.devices[0];
    expect(mp?.message).toBe('applied and verified: 1 stanza(s) added');
    expect(mp?.outcome).toBe('changed');
    const restarts = device.requests().filter((r) => r.method === 'PUT' && r.path === '/api/v1/service/networking/');
    expect(restarts.map((r) => r.status)).toEqual([429, 429, 202]);
    // The two waits together took longer than the restart timeout: the case this is about.
    expect(Date.parse(restarts[2]!.time) - Date.parse(restarts[0]!.time)).toBeGreaterThanOrEqual(1_500);
    expect(events.some((e) => e.type === 'step-failed')).toBe(false);
  });
});
