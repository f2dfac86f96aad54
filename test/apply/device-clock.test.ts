import { describe, expect, it } from 'vitest';
import { applyFile } from './apply-helpers.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickFromProfile } from '../support/stick-workspace.js';

/**
 * The device's clock, as its Admin API's Date header tells it (the simulator's clock-offset
 * fault), against this machine's and against the EAP-TLS client certificate the stick installs
 * (profiles/certs/mp01-cert.pem, valid 2026-11-22 12:41:05 to 2046-11-17 12:41:05 UTC).
 */

const { start } = useSimulators(PROFILE_DEVICE);
const changes = (requests: readonly { method: string }[]) => requests.filter((r) => r.method !== 'GET');

describe("the device's clock", () => {
  it('30 days behind, before the certificate is valid: plan and apply refuse before any change, with the fix', async () => {
    const device = await start({ faults: ['clock-offset=-30d'] });
    const file = stickFromProfile('eap-tls-pem.yaml', device.url);
    for (const dryRun of [true, false]) {
      const { result } = await applyFile(file, { dryRun });
      const mp = result.devices[0];
      expect(mp?.outcome).toBe('failed');
      expect(mp?.code).toBe('MPPROV_PLAN_REFUSED');
      expect(mp?.message).toMatch(
        /^refused before any change: eth1: the client certificate certs\/mp01-cert\.pem is valid from 2026-11-22 12:41:05 UTC to 2046-11-17 12:41:05 UTC, but the device's clock says \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(30 days behind this machine's\): the MP would refuse it at 802\.1X; set the MP's time, then run again; eth1: the CA certificate certs\/radius-ca\.pem \(ca_cert\) is valid from 2026-11-22 12:41:04 UTC to 2046-11-17 12:41:04 UTC, but the device's clock says \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(30 days behind this machine's\): the MP could not trust the RADIUS server's certificate with it at 802\.1X; set the MP's time, then run again$/,
      );
      expect(mp?.warnings).toHaveLength(1);
      expect(mp?.warnings[0]).toMatch(
        /^the device's clock is 30 days behind this machine's \(device .+ UTC, here .+ UTC\): 802\.1X with certificates fails when the MP's clock is outside their validity; set the MP's time$/,
      );
    }
    expect(changes(device.requests())).toEqual([]);
  });

  it('10 minutes ahead, the certificate still valid there: a warning, and the apply goes on', async () => {
    const device = await start({ faults: ['clock-offset=10m'] });
    const { result } = await applyFile(stickFromProfile('eap-tls-pem.yaml', device.url));
    const mp = result.devices[0];
    expect(mp?.outcome).toBe('changed');
    expect(mp?.warnings.filter((w) => w.startsWith("the device's clock"))).toEqual([
      expect.stringMatching(/^the device's clock is 10 min ahead of this machine's \(device /),
    ]);
    expect(changes(device.requests()).length).toBeGreaterThan(0);
  });

  it('right: no clock warning', async () => {
    const device = await start();
    const { result } = await applyFile(stickFromProfile('eap-tls-pem.yaml', device.url), { dryRun: true });
    const mp = result.devices[0];
    expect(mp?.outcome).toBe('changed');
    expect(mp?.warnings.filter((w) => w.includes('clock'))).toEqual([]);
  });
});
