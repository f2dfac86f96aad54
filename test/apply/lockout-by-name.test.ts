import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadAuthenticatorProfile } from '../../src/simulator/index.js';
import { applyFile } from './apply-helpers.js';
import { writeSequence } from '../support/device-observations.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig } from '../support/stick-workspace.js';

/**
 * The lockout guard cannot be sidestepped by naming the device by host name: `https://localhost:P`
 * resolves to the address the device reports on eth0, so eth0 is still the interface mpprov
 * reaches it through.
 */

const switchProfile = fileURLToPath(new URL('../fixtures/switch/peap-port.yaml', import.meta.url));
const simulators = useSimulators(PROFILE_DEVICE);

const eth0Peap = `    interfaces:
      eth0:
        ipv4: { method: dhcp }
        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "lockout-SeCrEt-wrong", ca_cert: certs/radius-ca.pem }
`;

describe('lockout guard with a host name in the URL', () => {
  it('https://localhost:P is the device on 127.0.0.1: changing eth0 802.1X is refused before any change', async () => {
    const device = await simulators.start({ switchPorts: { eth0: await loadAuthenticatorProfile(switchProfile) } });
    const byName = device.url.replace('127.0.0.1', 'localhost');
    expect(byName).toMatch(/^https:\/\/localhost:\d+$/);
    const { result } = await applyFile(stickWithConfig(stickHead(device, eth0Peap).replace(device.url, byName)));
    expect(result.devices[0]?.url).toBe(byName);
    expect(result.devices[0]?.code).toBe('MPPROV_PLAN_REFUSED');
    expect(result.devices[0]?.message).toBe(
      'refused before any change: this changes the 802.1X of eth0, the interface mpprov reaches the device through; ' +
        'if the switch port or network does not accept the new settings the device drops off the network until someone fixes it on site ' +
        '(set allow_disconnect: true in the file, or pass --allow-disconnect, if that is intended)',
    );
    expect(device.requests().length).toBeGreaterThan(0);
    expect(writeSequence(device)).toEqual([]);
    expect(device.state().restarts).toBe(0);
  });
});

describe('lockout guard with an IPv4-in-IPv6 spelling of the device', () => {
  // Node's URL parser rewrites [::ffff:127.0.0.1] as [::ffff:7f00:1]; every form is the device on 127.0.0.1.
  it.each(['[::ffff:127.0.0.1]', '[::FFFF:7F00:1]', '[0:0:0:0:0:ffff:7f00:0001]'])(
    'https://%s:P is the device on 127.0.0.1: changing eth0 802.1X is refused before any change',
    async (spelling) => {
      const device = await simulators.start({ switchPorts: { eth0: await loadAuthenticatorProfile(switchProfile) } });
      const mapped = device.url.replace('127.0.0.1', spelling);
      expect(mapped).toContain(spelling);
      const { result } = await applyFile(stickWithConfig(stickHead(device, eth0Peap).replace(device.url, mapped)));
      expect(result.devices[0]?.code, result.devices[0]?.message).toBe('MPPROV_PLAN_REFUSED');
      expect(result.devices[0]?.message).toBe(
        'refused before any change: this changes the 802.1X of eth0, the interface mpprov reaches the device through; ' +
          'if the switch port or network does not accept the new settings the device drops off the network until someone fixes it on site ' +
          '(set allow_disconnect: true in the file, or pass --allow-disconnect, if that is intended)',
      );
      expect(device.requests().length).toBeGreaterThan(0);
      expect(writeSequence(device)).toEqual([]);
    },
  );
});
