import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { applyFile } from './apply-helpers.js';
import { normaliseFields } from '../../src/plan/index.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { activeInterface, writeSequence } from '../support/device-observations.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, profilesDir, stickFromProfile, testAgentConfig } from '../support/stick-workspace.js';
import { STATIC_DUAL_STACK_ETH1_INET, STATIC_DUAL_STACK_ETH1_LINK } from '../support/profile-expectations.js';

const profiles = readdirSync(profilesDir)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const { start: startProfileDevice } = useSimulators(PROFILE_DEVICE);
let device: SimulatorHandle | undefined;

const apply = (file: string, agent = testAgentConfig()) => applyFile(file, { agent });

describe('every profile applies to a fresh simulated device', () => {
  for (const profile of profiles) {
    it(profile, async () => {
      device = await startProfileDevice();
      const file = stickFromProfile(profile, device.url);
      const agent = testAgentConfig();

      const first = await apply(file, agent);
      expect(first.result.problems.filter((p) => p.severity === 'error')).toEqual([]);
      // The one profile with a static 802.1X stanza (the VLAN): applied, but its authorization cannot be seen.
      const verified =
        profile === 'vlan-dot1x.yaml'
          ? /^applied: 2 stanza\(s\) added; .* 802\.1X authorization of eth1\.100 inet is not visible/
          : /^applied and verified/;
      expect(first.result.devices.map((d) => [d.outcome, d.message])).toEqual([
        ['changed', expect.stringMatching(verified)],
      ]);
      const restartsAfterFirst = device.state().restarts;
      expect(restartsAfterFirst).toBe(profile === 'acl.yaml' ? 0 : 1);

      // The active view holds what each desired stanza asked for (secrets as `_set` markers).
      // Every profile but acl.yaml changes stanzas: otherwise the loop below would check nothing.
      expect(first.result.plans.flatMap((plan) => plan.stanzas).length === 0).toBe(profile === 'acl.yaml');
      for (const plan of first.result.plans) {
        for (const change of plan.stanzas) {
          const iface = activeInterface(device, change.name) as
            { families: Record<string, Record<string, unknown>> } | undefined;
          expect(iface?.families[change.family], `${change.name} ${change.family}`).toBeTruthy();
        }
      }

      // Second run: nothing to do, no write request, no restart.
      device.clearRequests();
      const second = await apply(file, agent);
      expect(second.result.devices.map((d) => [d.outcome, d.message])).toEqual([['no-change', expect.any(String)]]);
      expect(writeSequence(device)).toEqual([]);
      expect(device.state().restarts).toBe(restartsAfterFirst);
    });
  }
});

describe('static dual stack lands exactly', () => {
  it('holds the addresses, DNS, routes and link settings the profile asked for', async () => {
    device = await startProfileDevice();
    const { result } = await apply(stickFromProfile('static-dual-stack.yaml', device.url));
    expect(result.outcome).toBe('changed');
    const eth1 = activeInterface(device, 'eth1') as { families: Record<string, Record<string, unknown>> };
    expect(normaliseFields(eth1.families.inet ?? {})).toMatchObject({
      ...STATIC_DUAL_STACK_ETH1_INET,
      ...STATIC_DUAL_STACK_ETH1_LINK,
    });
    expect(normaliseFields(eth1.families.inet6 ?? {})).toMatchObject({
      method: 'static',
      address: '2001:db8:20::20',
      netmask: '64',
      gateway: '2001:db8:20::1',
    });
  });
});
