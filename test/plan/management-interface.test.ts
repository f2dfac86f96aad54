import { describe, expect, it } from 'vitest';
import { managementInterface } from '../../src/plan/index.js';
import { deviceView } from './device-view.js';

/** Which interface the agent reaches the device through: the lockout guard protects that one. */
describe('managementInterface', () => {
  const view = deviceView([
    {
      name: 'eth0',
      families: {
        inet: {
          method: 'dhcp',
          in_use: { address: '198.51.100.7', netmask: '255.255.255.0', gateway: '198.51.100.1' },
        },
      },
    },
    {
      name: 'eth1',
      families: {
        inet: { method: 'static', address: '192.0.2.10', netmask: '255.255.255.0' },
        inet6: { method: 'static', address: '2001:db8::10', netmask: '64' },
      },
    },
  ]);

  it('is the interface whose active address is the URL host', () => {
    expect(managementInterface(view, 'https://192.0.2.10')).toBe('eth1');
    expect(managementInterface(view, 'https://[2001:DB8:0::10]:8443')).toBe('eth1');
    expect(managementInterface(view, 'https://198.51.100.7')).toBe('eth0');
  });

  it('else the one holding the default route (a host name, or an address behind NAT)', () => {
    expect(managementInterface(view, 'https://mp01.corp.example')).toBe('eth0');
    expect(managementInterface(view, 'https://203.0.113.5')).toBe('eth0');
  });

  it('is unknown when nothing matches and no interface has a gateway', () => {
    expect(
      managementInterface(
        deviceView([{ name: 'eth1', families: { inet: { method: 'manual' } } }]),
        'https://203.0.113.5',
      ),
    ).toBeUndefined();
  });
});

describe('managementInterface with IPv4-in-IPv6 spellings', () => {
  const view = deviceView([
    {
      name: 'eth0',
      families: { inet: { method: 'static', address: '192.0.2.10', netmask: '255.255.255.0' } },
    },
    {
      name: 'eth1',
      families: {
        inet: {
          method: 'dhcp',
          in_use: { address: '198.51.100.7', netmask: '255.255.255.0', gateway: '198.51.100.1' },
        },
      },
    },
  ]);

  it('finds eth0 through every spelling of 192.0.2.10, not the interface holding the route', () => {
    for (const url of [
      'https://[::ffff:192.0.2.10]',
      'https://[::ffff:c000:20a]:8443',
      'https://[::FFFF:C000:020A]',
      'https://[0:0:0:0:0:ffff:192.0.2.10]',
      'https://[::192.0.2.10]',
    ])
      expect(managementInterface(view, url), url).toBe('eth0');
  });

  it('keeps ::1 and :: as IPv6 (not 0.0.0.1)', () => {
    expect(managementInterface(view, 'https://[::1]')).toBe('eth1');
  });
});
