import { describe, expect, it } from 'vitest';
import { activeEth1 } from '../support/device-observations.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig } from '../support/stick-workspace.js';
import { applyFile } from './apply-helpers.js';

const { start } = useSimulators(PROFILE_DEVICE);
const eth1 = (address: string): string =>
  `    interfaces:\n      eth1:\n        ipv4: { method: static, address: ${address}/24, gateway: 198.51.100.1 }\n`;

/**
 * The restart timeout is how long the device may take to answer again after the restart it
 * accepted. A restart it first refuses with 429 (its limit on service actions: one a second) is
 * waited out before that (Retry-After), and the wait must not count against the timeout: a device
 * that then comes back in 100 ms was once reported as "did not answer again within N s".
 */
describe('a restart the device first answers 429', () => {
  it('waits out Retry-After, then gives the device its whole restart timeout', { timeout: 30_000 }, async () => {
    const device = await start({ restartMs: 100, serviceRateLimit: { perSecond: 1, perMinute: 12 } });
    const first = await applyFile(stickWithConfig(stickHead(device, eth1('198.51.100.20'))), {
      restartTimeoutMs: 10_000,
    });
    expect(first.result.devices[0]?.outcome).toBe('changed');
    // At once again: the device's one-a-second limit answers this restart 429, Retry-After: 1.
    const second = await applyFile(stickWithConfig(stickHead(device, eth1('198.51.100.21'))), {
      restartTimeoutMs: 800,
    });
    const restarts = device.requests().filter((r) => r.method === 'PUT' && r.path === '/api/v1/service/networking/');
    expect(
      restarts.map((r) => r.status),
      'the second restart was refused once first (else this proves nothing)',
    ).toEqual([202, 429, 202]);
    expect(second.result.devices[0], second.result.devices[0]?.message).toMatchObject({ outcome: 'changed' });
    expect(activeEth1(device)).toMatchObject({ address: '198.51.100.21' });
  });
});
