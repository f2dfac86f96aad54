import { describe, expect, it } from 'vitest';
import { leaseProblem, parseLeaseLine } from '../../src/preflight/dhcp-client.js';

/**
 * The lease line our udhcpc script prints, from a hostile DHCP server: the prefix is read from the
 * server's netmask itself, since busybox's own `mask` counts the bits of any mask (255.0.255.0 is
 * 24 to it), and a lease refused says why, escaped, instead of passing for no answer at all.
 */

const line = (subnet: string, mask: string, ip = '10.29.0.120') =>
  `MPPF-LEASE ip=${ip} mask=${mask} subnet=${subnet} router=10.29.0.1 dns=10.29.0.53`;

describe('a hostile lease', () => {
  it('takes the prefix from a netmask that is one', () => {
    expect(parseLeaseLine(line('255.255.255.0', '24'))).toEqual({
      address: '10.29.0.120',
      prefix: 24,
      gateway: '10.29.0.1',
      dns: ['10.29.0.53'],
    });
    expect(parseLeaseLine(line('255.255.255.255', '32'))?.prefix).toBe(32);
    expect(parseLeaseLine(line('128.0.0.0', '1'))?.prefix).toBe(1);
  });

  it('refuses a netmask that is no prefix, whatever udhcpc counted', () => {
    expect(parseLeaseLine(line('255.0.255.0', '24'))).toBeUndefined();
    expect(leaseProblem(line('255.0.255.0', '24'))).toBe('the netmask "255.0.255.0" is not a prefix from /1 to /32');
  });

  it('refuses /0 and says so', () => {
    expect(parseLeaseLine(line('0.0.0.0', '0'))).toBeUndefined();
    expect(leaseProblem(line('0.0.0.0', '0'))).toBe('the netmask "0.0.0.0" is not a prefix from /1 to /32');
    expect(leaseProblem('MPPF-LEASE ip=10.1.2.3 mask=0 router= dns=')).toBe(
      'the prefix length "0" is not one from 1 to 32',
    );
  });

  it('shows a server value with control characters escaped and cut', () => {
    const said = leaseProblem(line('\u001b[2J255.0.0.0', '8'));
    expect(said).toBe('the netmask "\\\\x1b[2J255.0.0.0" is not a prefix from /1 to /32');
    // eslint-disable-next-line no-control-regex -- the point: no control character
    expect(said).not.toMatch(/[\u0000-\u001f]/);
    expect(leaseProblem(line('255.255.255.0', '24', `${'9'.repeat(100)}`))).toBe(
      `the address "${'9'.repeat(40)}" is not an IPv4 address`,
    );
  });

  it('says nothing of a line that is no lease, or of a good one', () => {
    expect(leaseProblem('udhcpc: sending discover')).toBeUndefined();
    expect(leaseProblem(line('255.255.0.0', '16'))).toBeUndefined();
  });
});
