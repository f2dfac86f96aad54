import { describe, expect, it } from 'vitest';
import type { StanzaSettings, WriteOnlyField } from '../../src/admin-api/index.js';
import { verifyView } from '../../src/apply/verify-view.js';
import { Secret } from '../../src/core/secret.js';
import type { ExpectedStanza } from '../../src/plan/index.js';
import { deviceView } from '../plan/device-view.js';

/** verifyView is pure: a device view against the plan's expectations, one sentence per stanza. */

function expect1(fields: StanzaSettings, secrets: Partial<Record<WriteOnlyField, Secret>> = {}): ExpectedStanza {
  return { name: 'eth1', family: 'inet', stanza: { name: 'eth1', family: 'inet', fields, secrets } };
}

const STATIC = { method: 'static', address: '192.0.2.20', netmask: '255.255.255.0', gateway: '192.0.2.1' };
const DOT1X = {
  method: 'dhcp',
  wpa_key_mgmt: 'IEEE8021X',
  wpa_eap: 'PEAP',
  wpa_identity: 'mp01',
  wpa_phase1: 'peapver=0',
  wpa_phase2: 'auth=MSCHAPV2',
};

describe('verifyView', () => {
  it('finds nothing wrong in a view that holds the expected stanzas, however spelled, and not the removed ones', () => {
    const view = deviceView([
      {
        name: 'eth1',
        families: {
          inet: {
            method: 'static',
            address: '192.0.2.20',
            netmask: '24',
            gateway: '192.0.2.1',
            in_use: { address: '192.0.2.20' },
          },
        },
      },
    ]);
    const gone: ExpectedStanza = { name: 'eth2', family: 'inet', stanza: null };
    expect(verifyView(view, [expect1(STATIC), gone])).toEqual([]);
  });

  it('says which stanza is missing, still there, or holds which other value', () => {
    const view = deviceView([
      {
        name: 'eth1',
        families: {
          inet: { method: 'static', address: '192.0.2.21', netmask: '255.255.255.0', dns_nameservers: ['192.0.2.53'] },
        },
      },
      { name: 'eth2', families: { inet: { method: 'dhcp' } } },
    ]);
    const expected: ExpectedStanza[] = [
      expect1(STATIC),
      { name: 'eth2', family: 'inet', stanza: null },
      {
        name: 'eth3',
        family: 'inet6',
        stanza: { name: 'eth3', family: 'inet6', fields: { method: 'auto' }, secrets: {} },
      },
    ];
    expect(verifyView(view, expected)).toEqual([
      'eth1 inet: address is 192.0.2.21, expected 192.0.2.20; gateway is (none), expected 192.0.2.1; dns_nameservers is ["192.0.2.53"], expected (none)',
      'eth2 inet is still there',
      'eth3 inet6 is missing',
    ]);
  });

  it('checks write-only fields by their _set markers only', () => {
    const wanted = expect1({ method: 'dhcp' }, { wpa_password: new Secret('vv-pw') });
    expect(
      verifyView(deviceView([{ name: 'eth1', families: { inet: { method: 'dhcp', wpa_password_set: true } } }]), [
        wanted,
      ]),
    ).toEqual([]);
    expect(verifyView(deviceView([{ name: 'eth1', families: { inet: { method: 'dhcp' } } }]), [wanted])).toEqual([
      'eth1 inet: wpa_password is not set',
    ]);
    expect(
      verifyView(deviceView([{ name: 'eth1', families: { inet: { method: 'dhcp', passphrase_set: true } } }]), [
        expect1({ method: 'dhcp' }),
      ]),
    ).toEqual(['eth1 inet: passphrase is still set']);
  });

  it('never reads an authorization state or any field beyond the model, on the stanza or on the interface', () => {
    // A device (or a simulator asked to) may add its own fields; the model has no authorization
    // state, so these views verify exactly as they would without those fields.
    const onStanza = deviceView([
      { name: 'eth1', families: { inet: { ...DOT1X, dot1x_state: 'unauthorized', x_vendor_port: 'blocked' } } },
    ]);
    const onInterface = deviceView([{ name: 'eth1', dot1x_state: 'unauthorized', families: { inet: DOT1X } }]);
    expect(verifyView(onStanza, [expect1(DOT1X)])).toEqual([]);
    expect(verifyView(onInterface, [expect1(DOT1X)])).toEqual([]);
    // The settings it does know are still judged beside them.
    expect(
      verifyView(
        deviceView([
          { name: 'eth1', families: { inet: { ...DOT1X, wpa_identity: 'mp02', x_vendor_port: 'blocked' } } },
        ]),
        [expect1(DOT1X)],
      ),
    ).toEqual(['eth1 inet: wpa_identity is mp02, expected mp01']);
  });
});
