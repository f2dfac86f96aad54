import { describe, expect, it } from 'vitest';
import { managementInterface } from '../../src/plan/index.js';
import { lockoutRefusal } from '../../src/plan/lockout-guard.js';
import type { StanzaChange } from '../../src/plan/plan-types.js';
import { deviceView } from './device-view.js';

const dot1xOn = (name: string): StanzaChange => ({
  name,
  family: 'inet',
  action: 'update',
  changes: [{ field: 'wpa_eap', from: undefined, to: 'PEAP', secret: false }],
  unchangedSecrets: [],
});

describe('lockout guard: which interface', () => {
  const view = deviceView([
    { name: 'eth0', families: { inet: { method: 'dhcp', in_use: { address: '127.0.0.1', netmask: '255.0.0.0' } } } },
    { name: 'eth1', families: { inet: { method: 'dhcp' } } },
  ]);

  it('matches the addresses the URL host resolved to, not its spelling', () => {
    expect(managementInterface(view, 'https://localhost:8443', ['::1', '127.0.0.1'])).toBe('eth0');
    expect(managementInterface(view, 'https://localhost:8443')).toBeUndefined();
  });

  it('cannot tell (no address matches, no gateway anywhere): a dangerous change to any interface is refused, saying why', () => {
    const noClue = deviceView([
      { name: 'eth0', families: { inet: { method: 'dhcp' } } },
      { name: 'eth1', families: { inet: { method: 'dhcp' } } },
    ]);
    const mgmt = managementInterface(noClue, 'https://mp.example', ['203.0.113.9']);
    expect(mgmt).toBeUndefined();
    expect(lockoutRefusal([dot1xOn('eth1')], mgmt)).toEqual({
      reason: 'lockout',
      message:
        'this changes the 802.1X of eth1, and mpprov cannot tell which interface it reaches the device through ' +
        '(no interface has the address the URL names and none has a gateway), so it may be that one; ' +
        'if the switch port or network does not accept the new settings the device drops off the network until someone fixes it on site ' +
        '(set allow_disconnect: true in the file, or pass --allow-disconnect, if that is intended)',
    });
  });

  it('a known management interface guards only itself', () => {
    expect(lockoutRefusal([dot1xOn('eth1')], 'eth0')).toBeUndefined();
    expect(lockoutRefusal([dot1xOn('eth0')], 'eth0')?.message).toMatch(
      /^this changes the 802\.1X of eth0, the interface mpprov reaches the device through; /,
    );
    expect(lockoutRefusal([{ ...dot1xOn('eth1'), action: 'create' }], undefined)).toBeUndefined();
  });
});
