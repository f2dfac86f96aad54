import { describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { applyFile } from './apply-helpers.js';
import { writeSequence } from '../support/device-observations.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig } from '../support/stick-workspace.js';

/** Rules only the device's own facts can decide: refused before any change, not by a 400 halfway. */
const { start: startProfileDevice } = useSimulators(PROFILE_DEVICE);
let device: SimulatorHandle | undefined;

const cases: [string, string, string, string?][] = [
  [
    'a wireless port without a wireless block',
    '    interfaces:\n      wlan0:\n        ipv4: { method: dhcp }\n',
    'wlan0 is wireless on this device: it needs a wireless block (ssid and security)',
  ],
  [
    'an ACL rule naming an interface the device does not have',
    '    acl:\n      - { protocol: tcp, ports: "22", sources: [10.0.0.0/8], interfaces: [eth9] }\n',
    'ACL rule names eth9, which is not an interface of this device (it has eth0, eth1, wlan0)',
  ],
  [
    'an interface the device does not have',
    '    interfaces:\n      eth7:\n        ipv4: { method: dhcp }\n',
    'the device has no interface eth7 (it has eth0, eth1, wlan0)',
  ],
  [
    'autoneg on a port that cannot auto-negotiate',
    '    interfaces:\n      eth2:\n        ipv4: { method: dhcp }\n        link: { autoneg: true }\n',
    'eth2 does not auto-negotiate on this device: remove autoneg: true and give its fixed speed',
    'm70',
  ],
  [
    'a speed the port does not support',
    '    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n        link: { speed: 2500, duplex: full, autoneg: false }\n',
    'eth1 cannot run at 2500 Mb/s (it supports 10, 100, 1000)',
  ],
];

describe('device-only rules', () => {
  for (const [what, config, sentence, model] of cases) {
    it(what, async () => {
      device = await startProfileDevice(model === undefined ? {} : { model });
      const { result } = await applyFile(stickWithConfig(stickHead(device, config)));
      expect(result.devices[0]?.code).toBe('MPPROV_PLAN_REFUSED');
      expect(result.devices[0]?.message).toBe(`refused before any change: ${sentence}`);
      expect(writeSequence(device)).toEqual([]);
    });
  }
});
