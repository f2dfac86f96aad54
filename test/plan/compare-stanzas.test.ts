import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/core/secret.js';
import { compareStanza, type DesiredStanza } from '../../src/plan/index.js';

/** The plan's comparison is pure: these cases pin down what counts as a change. */
const desired = (fields: DesiredStanza['fields'], secrets: DesiredStanza['secrets'] = {}): DesiredStanza => ({
  name: 'eth1',
  family: 'inet6',
  fields,
  secrets,
});
const never = () => false;
const always = () => true;

describe('compareStanza', () => {
  it('treats address spellings, prefix forms and route order as the same configuration', () => {
    const want = desired({
      method: 'static',
      address: '2001:db8:0:0::10',
      netmask: '64',
      routes: [
        { destination: '2001:db8:ff00::/40', gateway: '2001:DB8::FE' },
        { destination: '2001:db8:1::/48', gateway: '2001:db8::1', metric: 10 },
      ],
    });
    const have = {
      method: 'static',
      address: '2001:db8::10',
      // The device's netmask is a string (the Stanza schema); a leading slash is still the same prefix.
      netmask: '/64',
      routes: [
        { destination: '2001:db8:1::/48', gateway: '2001:db8::1', metric: 10 },
        { destination: '2001:db8:ff00::/40', gateway: '2001:db8::fe' },
      ],
      in_use: { address: '2001:db8::10' },
    };
    expect(compareStanza(want, have, never)).toEqual([]);
  });

  it('keeps DNS server order: it is the resolver preference', () => {
    const changes = compareStanza(
      desired({ method: 'dhcp', dns_nameservers: ['192.0.2.2', '192.0.2.1'] }),
      { method: 'dhcp', dns_nameservers: ['192.0.2.1', '192.0.2.2'] },
      never,
    );
    expect(changes.map((c) => c.field)).toEqual(['dns_nameservers']);
  });

  it('accepts a dotted IPv4 netmask for a prefix written as a number', () => {
    const want = {
      name: 'eth1',
      family: 'inet' as const,
      fields: { method: 'static', address: '192.0.2.10', netmask: '255.255.255.0' },
      secrets: {},
    };
    expect(compareStanza(want, { method: 'static', address: '192.0.2.10', netmask: '24' }, never)).toEqual([]);
  });

  it('re-sends a secret unless the record knows it and the device has it set', () => {
    const want = desired({ method: 'dhcp' }, { wpa_password: new Secret('cmp-SeCrEt') });
    expect(compareStanza(want, { method: 'dhcp', wpa_password_set: true }, always)).toEqual([]);
    expect(compareStanza(want, { method: 'dhcp', wpa_password_set: true }, never)).toEqual([
      { field: 'wpa_password', from: 'set', to: 'set', secret: true },
    ]);
    expect(compareStanza(want, { method: 'dhcp' }, always)).toEqual([
      { field: 'wpa_password', from: undefined, to: 'set', secret: true },
    ]);
  });

  it('sees a secret the file no longer has as a removal, and fields of the view as no configuration', () => {
    const changes = compareStanza(
      desired({ method: 'dhcp' }),
      { method: 'dhcp', passphrase_set: true, dot1x_state: 'authorized', config_state: 'active' },
      always,
    );
    expect(changes).toEqual([{ field: 'passphrase', from: 'set', to: undefined, secret: true }]);
  });

  it('tolerates fields a device adds beyond the model: no change to make, nothing to judge', () => {
    const have = { method: 'dhcp', mtu: 1500, x_vendor_port_state: 'blocked', dot1x_state: 'unauthorized' };
    expect(compareStanza(desired({ method: 'dhcp', mtu: 1500 }), have, always)).toEqual([]);
    // A known setting beside them is still compared.
    expect(compareStanza(desired({ method: 'dhcp', mtu: 9000 }), have, always)).toEqual([
      { field: 'mtu', from: 1500, to: 9000, secret: false },
    ]);
  });
});
