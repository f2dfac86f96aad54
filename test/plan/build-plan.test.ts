import { describe, expect, it } from 'vitest';
import type { AclRule, Family, StanzaSettings, WriteOnlyField } from '../../src/admin-api/index.js';
import { Secret } from '../../src/core/secret.js';
import {
  buildPlan,
  describeStep,
  type DesiredDevice,
  type DesiredFile,
  type DesiredInterface,
  type DesiredStanza,
  type DeviceSnapshot,
  type PlanOptions,
} from '../../src/plan/index.js';
import { deviceView } from './device-view.js';

/**
 * buildPlan is pure: (desired, snapshot) -> steps. These cases pin down the vendor's ordering rules
 * and the refusals on exact steps, without a device. The agent reaches the device at 192.0.2.10,
 * which eth0 holds: eth0 is the management interface throughout.
 */

const ETH0 = {
  name: 'eth0',
  families: { inet: { method: 'static', address: '192.0.2.10', netmask: '255.255.255.0', gateway: '192.0.2.1' } },
};

function stanza(
  name: string,
  family: Family,
  fields: StanzaSettings,
  secrets: Partial<Record<WriteOnlyField, Secret>> = {},
): DesiredStanza {
  return { name, family, fields, secrets };
}

function iface(name: string, stanzas: DesiredStanza[], extra: Partial<DesiredInterface> = {}): DesiredInterface {
  return { name, wireless: false, stanzas, ...extra };
}

function device(interfaces: DesiredInterface[], extra: Partial<DesiredDevice> = {}): DesiredDevice {
  return {
    name: 'mp1',
    url: 'https://192.0.2.10',
    interfaces,
    files: [],
    acl: undefined,
    prune: false,
    allowDisconnect: false,
    ...extra,
  };
}

/** The active view, and a pending view that shows the same (nothing pending) unless given. */
function snapshot(
  active: Record<string, unknown>[],
  extra: { pending?: Record<string, unknown>[]; acl?: AclRule[]; capability?: DeviceSnapshot['capability'] } = {},
): DeviceSnapshot {
  return {
    active: deviceView(active, 'active'),
    pending: deviceView(extra.pending ?? active, 'pending'),
    acl: extra.acl,
    capability: extra.capability,
  };
}

const OPTIONS: PlanOptions = { allowDisconnect: false, discardPending: false, secretKnown: () => false };

const file = (slot: DesiredFile['slot'], filename: string): DesiredFile => ({
  slot,
  filename,
  bytes: Buffer.from(filename),
  source: `certs/${filename}`,
});

describe('buildPlan', () => {
  it('has nothing to do when the device runs the file already, spelled differently', () => {
    const desired = device([
      iface('eth1', [stanza('eth1', 'inet6', { method: 'static', address: '2001:db8:0:0::20', netmask: '64' })]),
    ]);
    const plan = buildPlan(
      desired,
      snapshot([
        ETH0,
        {
          name: 'eth1',
          families: {
            inet6: { method: 'static', address: '2001:db8::20', netmask: '64', in_use: { address: '2001:db8::20' } },
          },
        },
      ]),
      OPTIONS,
    );
    expect(plan.steps).toEqual([]);
    expect(plan.hasChanges).toBe(false);
    expect(plan.refusals).toEqual([]);
    expect(plan.stanzas).toEqual([
      { name: 'eth1', family: 'inet6', action: 'unchanged', changes: [], unchangedSecrets: [] },
    ]);
    expect(plan.managementInterface).toBe('eth0');
  });

  it('uploads the files a new stanza names first (only those the device lacks), then posts, verifies, restarts once and verifies', () => {
    const peap = stanza('eth1', 'inet', {
      method: 'dhcp',
      wpa_key_mgmt: 'IEEE8021X',
      wpa_eap: 'TLS',
      wpa_identity: 'mp01',
      wpa_ca_cert: 'ca-1.pem',
      wpa_client_cert: 'client-1.pem',
      wpa_private_key: 'key-1.pem',
    });
    const desired = device([iface('eth1', [peap])], {
      files: [
        file('wpa_ca_cert', 'ca-1.pem'),
        file('wpa_client_cert', 'client-1.pem'),
        file('wpa_private_key', 'key-1.pem'),
      ],
    });
    // The CA is already on the device under that name, for another interface.
    const eth2 = {
      name: 'eth2',
      families: { inet: { method: 'dhcp', wpa_key_mgmt: 'IEEE8021X', wpa_eap: 'PEAP', wpa_ca_cert: 'ca-1.pem' } },
    };
    const plan = buildPlan(desired, snapshot([ETH0, eth2]), OPTIONS);
    expect(plan.refusals).toEqual([]);
    expect(plan.steps.map(describeStep)).toEqual([
      'upload 2 file(s): client-1.pem (wpa_client_cert, from certs/client-1.pem), key-1.pem (wpa_private_key, from certs/key-1.pem)',
      'POST eth1 inet (create)',
      'check the pending view holds 1 stanza change(s)',
      'restart networking (1 stanza change(s))',
      'check the active view after the restart (1 stanza(s))',
    ]);
    expect(plan.steps[1]).toEqual({ kind: 'post-stanza', stanza: peap, action: 'create' });
    expect(plan.steps[4]).toEqual({
      kind: 'verify-active',
      expected: [{ name: 'eth1', family: 'inet', stanza: peap }],
    });
  });

  it('changes an SSID by delete, restart, add, restart (the vendor procedure)', () => {
    const wlan = stanza('wlan0', 'inet', { method: 'dhcp', ssid: 'NewNet', security: 'open' });
    const desired = device([iface('wlan0', [wlan], { wireless: true })]);
    const plan = buildPlan(
      desired,
      snapshot([ETH0, { name: 'wlan0', families: { inet: { method: 'dhcp', ssid: 'OldNet', security: 'open' } } }]),
      OPTIONS,
    );
    expect(plan.steps.map(describeStep)).toEqual([
      'DELETE wlan0 inet (the SSID changes: the old network is removed first)',
      'check the pending view holds 1 stanza change(s)',
      'restart networking (remove the old SSID of wlan0)',
      'check the active view after the restart (1 stanza(s))',
      'POST wlan0 inet (create)',
      'check the pending view holds 1 stanza change(s)',
      'restart networking (1 stanza change(s))',
      'check the active view after the restart (1 stanza(s))',
    ]);
    expect(plan.steps[1]).toEqual({
      kind: 'verify-pending',
      expected: [{ name: 'wlan0', family: 'inet', stanza: null }],
    });
    expect(plan.stanzas.map((s) => [s.name, s.action])).toEqual([['wlan0', 'update']]);
  });

  it('posts a VLAN after its parent and deletes it before its parent; prune removes what the file does not name', () => {
    const vlan = stanza('eth1.100', 'inet', { method: 'dhcp', vlan_raw_device: 'eth1' });
    const parent = stanza('eth1', 'inet', { method: 'dhcp' });
    // The file lists the VLAN first: the plan must still post the parent first. eth0 is in the
    // file as it is: prune would otherwise remove the interface the agent talks through.
    const desired = device(
      [
        iface('eth1.100', [vlan], { vlanParent: 'eth1' }),
        iface('eth1', [parent]),
        iface('eth0', [stanza('eth0', 'inet', ETH0.families.inet)]),
      ],
      { prune: true },
    );
    const active = [
      ETH0,
      { name: 'eth1', families: { inet6: { method: 'auto' } } },
      { name: 'eth2', families: { inet: { method: 'dhcp' } } },
      { name: 'eth2.5', families: { inet: { method: 'dhcp', vlan_raw_device: 'eth2' } } },
    ];
    const plan = buildPlan(desired, snapshot(active), OPTIONS);
    expect(plan.refusals).toEqual([]);
    expect(plan.steps.map(describeStep)).toEqual([
      'DELETE eth2.5 inet (prune: interface not in the file)',
      'POST eth1 inet (create)',
      // A parent's stanza goes after its other family was posted (which may keep the 802.1X a VLAN needs).
      'DELETE eth1 inet6 (not in the file for this interface)',
      'DELETE eth2 inet (prune: interface not in the file)',
      'POST eth1.100 inet (create)',
      'check the pending view holds 5 stanza change(s)',
      'restart networking (5 stanza change(s))',
      'check the active view after the restart (5 stanza(s))',
    ]);
  });

  it('without prune leaves interfaces the file does not name alone', () => {
    const desired = device([iface('eth1', [stanza('eth1', 'inet', { method: 'dhcp' })])]);
    const plan = buildPlan(
      desired,
      snapshot([ETH0, { name: 'eth2', families: { inet: { method: 'dhcp' } } }]),
      OPTIONS,
    );
    expect(plan.steps.map(describeStep)).toEqual([
      'POST eth1 inet (create)',
      'check the pending view holds 1 stanza change(s)',
      'restart networking (1 stanza change(s))',
      'check the active view after the restart (1 stanza(s))',
    ]);
  });

  it('refuses to change the addressing of the interface it talks through, unless allowed', () => {
    const desired = device([iface('eth0', [stanza('eth0', 'inet', { method: 'dhcp' })])]);
    const plan = buildPlan(desired, snapshot([ETH0]), OPTIONS);
    expect(plan.refusals).toEqual([
      {
        reason: 'lockout',
        message:
          'this changes the addressing of eth0, the interface mpprov reaches the device through; if the switch port or network does not accept the new settings the device drops off the network until someone fixes it on site (set allow_disconnect: true in the file, or pass --allow-disconnect, if that is intended)',
      },
    ]);
    expect(buildPlan(desired, snapshot([ETH0]), { ...OPTIONS, allowDisconnect: true }).refusals).toEqual([]);
    expect(buildPlan({ ...desired, allowDisconnect: true }, snapshot([ETH0]), OPTIONS).refusals).toEqual([]);
    // Adding the other family to it changes nothing the agent uses.
    const added = device([
      iface('eth0', [stanza('eth0', 'inet', ETH0.families.inet), stanza('eth0', 'inet6', { method: 'auto' })]),
    ]);
    expect(buildPlan(added, snapshot([ETH0]), OPTIONS).refusals).toEqual([]);
  });

  it('guards the 802.1X of the port under a VLAN it talks through, as of the VLAN itself', () => {
    const vlanMgmt = [
      { name: 'eth0', families: { inet: { method: 'manual' } } },
      {
        name: 'eth0.100',
        families: {
          inet: {
            method: 'static',
            address: '192.0.2.10',
            netmask: '255.255.255.0',
            vlan_raw_device: 'eth0',
            in_use: { address: '192.0.2.10', netmask: '255.255.255.0' },
          },
        },
      },
    ];
    const dot1x: StanzaSettings = { wpa_key_mgmt: 'IEEE8021X', wpa_eap: 'MD5', wpa_identity: 'mp-01' };
    const desired = device([iface('eth0', [stanza('eth0', 'inet', { method: 'manual', ...dot1x })])]);
    const plan = buildPlan(desired, snapshot(vlanMgmt), OPTIONS);
    expect(plan.managementInterface).toBe('eth0.100');
    expect(plan.refusals).toEqual([
      {
        reason: 'lockout',
        message:
          'this changes the 802.1X of eth0, the port that carries eth0.100, the interface mpprov reaches the device through; if the switch port or network does not accept the new settings the device drops off the network until someone fixes it on site (set allow_disconnect: true in the file, or pass --allow-disconnect, if that is intended)',
      },
    ]);
    expect(buildPlan(desired, snapshot(vlanMgmt), { ...OPTIONS, allowDisconnect: true }).refusals).toEqual([]);
    // Other changes of the port leave the VLAN's traffic alone.
    const mtu = device([iface('eth0', [stanza('eth0', 'inet', { method: 'manual', mtu: 1400 })])]);
    expect(buildPlan(mtu, snapshot(vlanMgmt), OPTIONS).refusals).toEqual([]);
  });

  it('stops at pending changes it did not make, and with discardPending restores or deletes them', () => {
    const eth2Active = {
      method: 'static',
      address: '198.51.100.2',
      netmask: '255.255.255.0',
      in_use: { address: '198.51.100.2' },
    };
    const active = [ETH0, { name: 'eth2', families: { inet: eth2Active } }];
    const pending = [
      ETH0,
      { name: 'eth2', families: { inet: { method: 'dhcp' } } },
      { name: 'eth3', families: { inet: { method: 'dhcp' } } },
    ];
    const desired = device([iface('eth1', [stanza('eth1', 'inet', { method: 'dhcp' })])]);

    const stopped = buildPlan(desired, snapshot(active, { pending }), OPTIONS);
    expect(stopped.refusals.map((r) => r.reason)).toEqual(['foreign-pending']);
    expect(stopped.refusals[0]?.message).toContain('(eth2 inet, eth3 inet)');

    const discarded = buildPlan(desired, snapshot(active, { pending }), { ...OPTIONS, discardPending: true });
    expect(discarded.refusals).toEqual([]);
    expect(discarded.steps.slice(0, 2)).toEqual([
      // The active settings go back, without the view-only in_use.
      {
        kind: 'restore-stanza',
        name: 'eth2',
        family: 'inet',
        fields: { method: 'static', address: '198.51.100.2', netmask: '255.255.255.0' },
        reason: 'discard a pending change mpprov did not make',
      },
      { kind: 'delete-stanza', name: 'eth3', family: 'inet', reason: 'discard a pending stanza mpprov did not make' },
    ]);
    expect(discarded.steps.slice(2).map(describeStep)).toEqual([
      'POST eth1 inet (create)',
      'check the pending view holds 1 stanza change(s)',
      'restart networking (1 stanza change(s))',
      'check the active view after the restart (1 stanza(s))',
    ]);
  });

  it('takes a pending stanza equal to the file as its own (an interrupted run), and cannot restore one that held secrets', () => {
    const desired = device([iface('eth1', [stanza('eth1', 'inet', { method: 'dhcp' })])]);
    const ours = buildPlan(
      desired,
      snapshot([ETH0], { pending: [ETH0, { name: 'eth1', families: { inet: { method: 'dhcp' } } }] }),
      OPTIONS,
    );
    expect(ours.refusals).toEqual([]);

    const withSecret = [
      ETH0,
      { name: 'eth2', families: { inet: { method: 'dhcp', wpa_key_mgmt: 'IEEE8021X', wpa_password_set: true } } },
    ];
    const pending = [ETH0, { name: 'eth2', families: { inet: { method: 'dhcp' } } }];
    const refused = buildPlan(desired, snapshot(withSecret, { pending }), { ...OPTIONS, discardPending: true });
    expect(refused.refusals).toEqual([
      {
        reason: 'cannot-restore',
        message:
          'cannot discard the pending change of eth2 inet: its active stanza holds secrets the device does not return (configure this interface in the file instead)',
      },
    ]);
  });

  it('sends a write-only value again unless the record knows it, asking by stanza key and field', () => {
    const asked: string[] = [];
    const desired = device([
      iface('eth1', [
        stanza(
          'eth1',
          'inet',
          { method: 'dhcp', wpa_key_mgmt: 'IEEE8021X', wpa_eap: 'MD5', wpa_identity: 'mp01' },
          { wpa_password: new Secret('md5-pw') },
        ),
      ]),
    ]);
    const onDevice = snapshot([
      ETH0,
      {
        name: 'eth1',
        families: {
          inet: {
            method: 'dhcp',
            wpa_key_mgmt: 'IEEE8021X',
            wpa_eap: 'MD5',
            wpa_identity: 'mp01',
            wpa_password_set: true,
          },
        },
      },
    ]);
    const known = buildPlan(desired, onDevice, {
      ...OPTIONS,
      secretKnown: (key, field, value) => (asked.push(`${key}/${field}`), value.reveal() === 'md5-pw'),
    });
    expect(asked).toEqual(['eth1 inet/wpa_password']);
    expect(known.steps).toEqual([]);
    expect(known.stanzas).toEqual([
      { name: 'eth1', family: 'inet', action: 'unchanged', changes: [], unchangedSecrets: ['wpa_password'] },
    ]);

    const unknown = buildPlan(desired, onDevice, OPTIONS);
    expect(unknown.stanzas).toEqual([
      {
        name: 'eth1',
        family: 'inet',
        action: 'update',
        changes: [{ field: 'wpa_password', from: 'set', to: 'set', secret: true }],
        unchangedSecrets: [],
      },
    ]);
    expect(unknown.steps.map(describeStep)[0]).toBe('POST eth1 inet (update)');
  });

  it('changes ACL rules last, after the restart, and leaves an equal rule alone whatever its list order', () => {
    const https: AclRule = {
      action: 'permit',
      protocol: 'tcp',
      from_port: 443,
      to_port: 443,
      source_addresses: ['10.0.0.0/8', '2001:db8::/32'],
      interfaces: ['eth0'],
    };
    const syslog: AclRule = {
      action: 'permit',
      protocol: 'udp',
      from_port: 514,
      to_port: 514,
      source_addresses: ['0.0.0.0/0'],
      interfaces: ['eth1'],
    };
    const snmp: AclRule = {
      action: 'permit',
      protocol: 'udp',
      from_port: 161,
      to_port: 162,
      source_addresses: ['10.0.0.0/8'],
      interfaces: ['eth0'],
    };
    const desired = device([iface('eth1', [stanza('eth1', 'inet', { method: 'dhcp' })])], { acl: [https, syslog] });
    const plan = buildPlan(
      desired,
      snapshot([ETH0], { acl: [{ ...https, source_addresses: ['2001:db8::/32', '10.0.0.0/8'] }, snmp] }),
      OPTIONS,
    );
    expect(plan.steps.map(describeStep)).toEqual([
      'POST eth1 inet (create)',
      'check the pending view holds 1 stanza change(s)',
      'restart networking (1 stanza change(s))',
      'check the active view after the restart (1 stanza(s))',
      'add ACL rule permit udp/514 from 0.0.0.0/0 on eth1',
      'remove ACL rule permit udp/161-162 from 10.0.0.0/8 on eth0',
    ]);
    expect(plan.steps[5]).toEqual({ kind: 'remove-acl-rule', rule: snmp });
  });

  it('refuses what the device cannot do, from its capability, before any step runs', () => {
    const desired = device([
      iface('eth9', [stanza('eth9', 'inet', { method: 'dhcp' })]),
      iface('eth1', [stanza('eth1', 'inet', { method: 'dhcp', link_speed: 10000, link_autoneg: false })]),
    ]);
    const capability = { interfaces: { eth0: { speeds: [100, 1000] }, eth1: { speeds: [100, 1000], autoneg: true } } };
    const plan = buildPlan(desired, snapshot([ETH0], { capability }), OPTIONS);
    expect(plan.refusals).toEqual([
      { reason: 'device-rule', message: 'the device has no interface eth9 (it has eth0, eth1)' },
      { reason: 'device-rule', message: 'eth1 cannot run at 10000 Mb/s (it supports 100, 1000)' },
    ]);
  });
});
