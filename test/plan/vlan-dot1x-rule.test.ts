import { describe, expect, it } from 'vitest';
import type { Family, StanzaSettings } from '../../src/admin-api/index.js';
import {
  buildPlan,
  describeStep,
  type DesiredDevice,
  type DesiredInterface,
  type DesiredStanza,
  type DeviceSnapshot,
  type PlanOptions,
} from '../../src/plan/index.js';
import { deviceView } from './device-view.js';

/**
 * The device's VLAN rule both ways, judged by the plan before any change: a VLAN stanza with
 * 802.1X only while its parent is on dhcp or static with 802.1X. The device's side (interfaces the
 * file does not name) is its next view: pending over active, or active when pending is discarded.
 * And the order that lets the device accept each request: a VLAN's 802.1X off before its parent's.
 */

const ETH0 = {
  name: 'eth0',
  families: { inet: { method: 'static', address: '192.0.2.10', netmask: '255.255.255.0', gateway: '192.0.2.1' } },
};
const PEAP = {
  wpa_key_mgmt: 'IEEE8021X',
  wpa_eap: 'PEAP',
  wpa_identity: 'mp01',
  wpa_phase1: 'peapver=0',
  wpa_phase2: 'auth=MSCHAPV2',
};
const MD5 = { wpa_key_mgmt: 'IEEE8021X', wpa_eap: 'MD5', wpa_identity: 'mp01-vlan' };
const ETH1_PEAP = { name: 'eth1', families: { inet: { method: 'dhcp', ...PEAP } } };
const VLAN_MD5 = { name: 'eth1.100', families: { inet: { method: 'dhcp', vlan_raw_device: 'eth1', ...MD5 } } };

const OPTIONS: PlanOptions = { allowDisconnect: false, discardPending: false, secretKnown: () => true };

const stanza = (name: string, family: Family, fields: StanzaSettings): DesiredStanza => ({
  name,
  family,
  fields,
  secrets: {},
});
const iface = (name: string, stanzas: DesiredStanza[], vlanParent?: string): DesiredInterface => ({
  name,
  wireless: false,
  stanzas,
  ...(vlanParent === undefined ? {} : { vlanParent }),
});
const device = (interfaces: DesiredInterface[], extra: Partial<DesiredDevice> = {}): DesiredDevice => ({
  name: 'mp1',
  url: 'https://192.0.2.10',
  interfaces,
  files: [],
  acl: undefined,
  prune: false,
  allowDisconnect: false,
  ...extra,
});
const snapshot = (active: Record<string, unknown>[], pending: Record<string, unknown>[] = active): DeviceSnapshot => ({
  active: deviceView(active, 'active'),
  pending: deviceView(pending, 'pending'),
  acl: undefined,
  capability: undefined,
});

/** eth1 as the file wants it after turning its 802.1X off. */
const eth1Plain = iface('eth1', [stanza('eth1', 'inet', { method: 'dhcp' })]);
const TURNED_OFF =
  'VLAN eth1.100 on the device keeps its 802.1X, which the device allows only while its parent eth1 is on dhcp or static with 802.1X, ' +
  'and this file leaves eth1 without it; in the same stick, turn off the 802.1X of eth1.100 (add eth1.100 to the file without a dot1x block) ' +
  'or remove eth1.100 (prune: true removes every interface the file does not name), or keep 802.1X on eth1';

describe('the VLAN 802.1X rule in the plan', () => {
  it("refuses to turn off a parent's 802.1X while a VLAN the file does not name keeps it, naming the VLAN and what to do", () => {
    const plan = buildPlan(device([eth1Plain]), snapshot([ETH0, ETH1_PEAP, VLAN_MD5]), OPTIONS);
    expect(plan.refusals).toEqual([{ reason: 'device-rule', message: TURNED_OFF }]);
  });

  it('refuses a parent left on manual, or removed, just the same', () => {
    const manual = iface('eth1', [stanza('eth1', 'inet', { method: 'manual', ...PEAP })]);
    expect(
      buildPlan(device([manual]), snapshot([ETH0, ETH1_PEAP, VLAN_MD5]), OPTIONS).refusals.map((r) => r.message),
    ).toEqual([TURNED_OFF]);
    // eth1 in the file with only an inet6 block: its inet stanza (the one with 802.1X) goes.
    const otherFamily = iface('eth1', [stanza('eth1', 'inet6', { method: 'auto' })]);
    expect(
      buildPlan(device([otherFamily]), snapshot([ETH0, ETH1_PEAP, VLAN_MD5]), OPTIONS).refusals.map((r) => r.message),
    ).toEqual([TURNED_OFF]);
  });

  it('judges the VLAN the device will have: its pending view, or its active one when pending is discarded', () => {
    const pendingVlan = snapshot([ETH0, ETH1_PEAP], [ETH0, ETH1_PEAP, VLAN_MD5]);
    const plan = buildPlan(device([eth1Plain]), pendingVlan, OPTIONS);
    expect(plan.refusals.map((r) => r.reason)).toEqual(['foreign-pending', 'device-rule']);
    expect(plan.refusals[1]?.message).toBe(TURNED_OFF);
    // Discarded, the pending VLAN goes: nothing left to break.
    expect(buildPlan(device([eth1Plain]), pendingVlan, { ...OPTIONS, discardPending: true }).refusals).toEqual([]);
    // A VLAN pending for removal (null) does not count either.
    const goingAway = snapshot(
      [ETH0, ETH1_PEAP, VLAN_MD5],
      [ETH0, ETH1_PEAP, { name: 'eth1.100', families: { inet: null } }],
    );
    expect(
      buildPlan(device([eth1Plain]), goingAway, { ...OPTIONS, discardPending: false }).refusals.map((r) => r.reason),
    ).toEqual(['foreign-pending']);
  });

  it("with the VLAN's 802.1X turned off in the same file: the VLAN first, then the parent", () => {
    const vlanPlain = iface(
      'eth1.100',
      [stanza('eth1.100', 'inet', { method: 'dhcp', vlan_raw_device: 'eth1' })],
      'eth1',
    );
    const plan = buildPlan(device([eth1Plain, vlanPlain]), snapshot([ETH0, ETH1_PEAP, VLAN_MD5]), OPTIONS);
    expect(plan.refusals).toEqual([]);
    expect(plan.steps.filter((s) => s.kind === 'post-stanza').map(describeStep)).toEqual([
      'POST eth1.100 inet (update)',
      'POST eth1 inet (update)',
    ]);
  });

  it("with the VLAN removed by prune: the VLAN's DELETE first, then the parent", () => {
    const eth0 = iface('eth0', [stanza('eth0', 'inet', ETH0.families.inet)]);
    const plan = buildPlan(device([eth0, eth1Plain], { prune: true }), snapshot([ETH0, ETH1_PEAP, VLAN_MD5]), OPTIONS);
    expect(plan.refusals).toEqual([]);
    expect(plan.steps.slice(0, 2).map(describeStep)).toEqual([
      'DELETE eth1.100 inet (prune: interface not in the file)',
      'POST eth1 inet (update)',
    ]);
  });

  it("turning 802.1X on for both: the parent first, then the VLAN (the vendor's order)", () => {
    const eth1 = iface('eth1', [stanza('eth1', 'inet', { method: 'dhcp', ...PEAP })]);
    const vlan = iface(
      'eth1.100',
      [stanza('eth1.100', 'inet', { method: 'dhcp', vlan_raw_device: 'eth1', ...MD5 })],
      'eth1',
    );
    const plan = buildPlan(device([vlan, eth1]), snapshot([ETH0]), OPTIONS);
    expect(plan.refusals).toEqual([]);
    expect(plan.steps.filter((s) => s.kind === 'post-stanza').map(describeStep)).toEqual([
      'POST eth1 inet (create)',
      'POST eth1.100 inet (create)',
    ]);
  });

  it("moves a parent's 802.1X to its other family: the new stanza posted before the old one goes", () => {
    const eth1v6 = iface('eth1', [
      stanza('eth1', 'inet6', { method: 'static', address: '2001:db8::20', netmask: '64', ...PEAP }),
    ]);
    const plan = buildPlan(device([eth1v6]), snapshot([ETH0, ETH1_PEAP, VLAN_MD5]), OPTIONS);
    expect(plan.refusals).toEqual([]);
    expect(plan.steps.slice(0, 2).map(describeStep)).toEqual([
      'POST eth1 inet6 (create)',
      'DELETE eth1 inet (not in the file for this interface)',
    ]);
  });

  it('still refuses 802.1X on a VLAN of the file whose parent on the device has none', () => {
    const vlan = iface(
      'eth1.100',
      [stanza('eth1.100', 'inet', { method: 'dhcp', vlan_raw_device: 'eth1', ...MD5 })],
      'eth1',
    );
    expect(
      buildPlan(device([vlan]), snapshot([ETH0, { name: 'eth1', families: { inet: { method: 'dhcp' } } }]), OPTIONS)
        .refusals,
    ).toEqual([
      {
        reason: 'device-rule',
        message:
          '802.1X on VLAN eth1.100 needs its parent eth1 on dhcp or static with 802.1X on the device; add eth1 with its dot1x block to the file',
      },
    ]);
    // The parent's 802.1X pending (made active by our restart) is enough.
    expect(
      buildPlan(device([vlan]), snapshot([ETH0], [ETH0, ETH1_PEAP]), {
        ...OPTIONS,
        discardPending: false,
      }).refusals.map((r) => r.reason),
    ).toEqual(['foreign-pending']);
  });

  it("leaves the device's own VLANs alone when the file touches neither side", () => {
    const eth0 = iface('eth0', [stanza('eth0', 'inet', ETH0.families.inet)]);
    const broken = snapshot([ETH0, { name: 'eth1', families: { inet: { method: 'dhcp' } } }, VLAN_MD5]);
    expect(buildPlan(device([eth0]), broken, OPTIONS).refusals).toEqual([]);
  });
});

describe('dual-stack interface-level changes', () => {
  it('post one stanza per family, the same interface-level fields in both, and verify both', () => {
    const link = { mtu: 9000 };
    const eth1 = iface('eth1', [
      stanza('eth1', 'inet', { method: 'dhcp', ...link }),
      stanza('eth1', 'inet6', { method: 'auto', ...link }),
    ]);
    const before = {
      name: 'eth1',
      families: { inet: { method: 'dhcp', mtu: 1500 }, inet6: { method: 'auto', mtu: 1500 } },
    };
    const plan = buildPlan(device([eth1]), snapshot([ETH0, before]), OPTIONS);
    expect(plan.steps.map(describeStep)).toEqual([
      'POST eth1 inet (update)',
      'POST eth1 inet6 (update)',
      'check the pending view holds 2 stanza change(s)',
      'restart networking (2 stanza change(s))',
      'check the active view after the restart (2 stanza(s))',
    ]);
    const verify = plan.steps.at(-1);
    expect(
      verify?.kind === 'verify-active' ? verify.expected.map((e) => [e.name, e.family, e.stanza?.fields.mtu]) : [],
    ).toEqual([
      ['eth1', 'inet', 9000],
      ['eth1', 'inet6', 9000],
    ]);
  });
});
