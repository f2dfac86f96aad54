import { describe, expect, it } from 'vitest';
import { applyFile } from './apply-helpers.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickFromProfile, stickHead, stickWithConfig } from '../support/stick-workspace.js';

/**
 * A device that comes back from the networking restart with another certificate (the simulator's
 * new-cert fault): the pin no longer matches, which may be a man in the middle. Said as exactly
 * that, at once, with no request sent over such a connection: not "did not answer in 120 s".
 */

const { start } = useSimulators(PROFILE_DEVICE);
const dhcpEth1 = '    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n';

describe('a certificate change across the restart', () => {
  it('is reported as a possible interception, and nothing is sent to the new certificate', async () => {
    const device = await start({ faults: ['new-cert,times=1'] });
    const pinned = device.fingerprintSha256;
    const { result } = await applyFile(stickWithConfig(stickHead(device, dhcpEth1)), { restartTimeoutMs: 20_000 });
    const restartAt = device
      .requests()
      .findIndex((r) => r.method === 'PUT' && r.path.startsWith('/api/v1/service/networking'));
    expect(restartAt).toBeGreaterThanOrEqual(0);
    const presented = device.fingerprintSha256;
    expect(presented).not.toBe(pinned);

    const mp = result.devices[0];
    expect(mp?.outcome).toBe('failed');
    expect(mp?.code).toBe('MPPROV_DEVICE_PIN_MISMATCH');
    expect(mp?.message).toBe(
      `the device presents a different certificate since the restart: expected ${pinned}, got ${presented}; possible interception`,
    );
    // The device is down from the restart until it listens again with the new certificate: any
    // request logged after the restart plus its 150 ms outage reached the new certificate.
    const putAt = Date.parse(device.requests()[restartAt]!.time);
    const late = device
      .requests()
      .slice(restartAt + 1)
      .filter((r) => Date.parse(r.time) - putAt >= PROFILE_DEVICE.restartMs!);
    expect(late).toEqual([]);
    expect(device.state().restarts).toBe(1);
  });

  it('a CA-trusted device that comes back with a certificate its CA did not issue: the same, not "did not answer"', async () => {
    const device = await start({ faults: ['new-cert,times=1'] });
    const file = stickFromProfile('dhcp.yaml', device.url);
    const { result } = await applyFile(file, { restartTimeoutMs: 20_000 });
    const mp = result.devices[0];
    expect(mp?.outcome).toBe('failed');
    expect(mp?.code).toBe('MPPROV_DEVICE_TLS');
    expect(mp?.deviceLost).toBe(true);
    expect(mp?.message).toMatch(
      new RegExp(
        `^the device presents a different certificate since the restart: the certificate of ${device.url} is not issued by the configured CA \\(.+\\); possible interception$`,
      ),
    );
    // Refused during the handshake: no request reached the device after its restart.
    const restartAt = device
      .requests()
      .findIndex((r) => r.method === 'PUT' && r.path.startsWith('/api/v1/service/networking'));
    expect(restartAt).toBeGreaterThanOrEqual(0);
    expect(device.requests().slice(restartAt + 1)).toEqual([]);
    expect(device.state().restarts).toBe(1);
  });
});
