import { describe, expect, it } from 'vitest';
import { deviceKeys, literalDeviceIdentity, resolveDeviceIdentity } from '../../src/client/index.js';

/** One device, one identity: every spelling of an address and port gives the same keys. */
describe('device identity', () => {
  it('maps every IPv4-in-IPv6 spelling to the IPv4 address, any case, compressed or not', () => {
    for (const url of [
      'https://127.0.0.1:8443',
      'https://[::ffff:127.0.0.1]:8443',
      'https://[::FFFF:7F00:1]:8443',
      'https://[0:0:0:0:0:ffff:7f00:0001]:8443',
      'https://[0000:0000:0000:0000:0000:FFFF:127.0.0.1]:8443',
      'https://[::127.0.0.1]:8443',
    ])
      expect(deviceKeys(literalDeviceIdentity(url)), url).toEqual(['https://127.0.0.1:8443']);
  });

  it('takes 443 when the URL gives no port, and keeps IPv6 as IPv6 (::1 is not 0.0.0.1)', () => {
    expect(deviceKeys(literalDeviceIdentity('https://192.0.2.10'))).toEqual(['https://192.0.2.10']);
    expect(deviceKeys(literalDeviceIdentity('https://192.0.2.10:443'))).toEqual(['https://192.0.2.10']);
    expect(literalDeviceIdentity('https://192.0.2.10').port).toBe(443);
    expect(deviceKeys(literalDeviceIdentity('https://[::1]:8443'))).toEqual(['https://[::1]:8443']);
    expect(deviceKeys(literalDeviceIdentity('https://[2001:DB8:0:0::10]'))).toEqual(['https://[2001:db8::10]']);
  });

  it('resolves a host name as the connection does; a name that does not resolve keys by its spelling', async () => {
    expect(deviceKeys(await resolveDeviceIdentity('https://LocalHost:8443'))).toContain('https://127.0.0.1:8443');
    expect(deviceKeys(await resolveDeviceIdentity('https://no-such-host.invalid:8443'))).toEqual([
      'https://no-such-host.invalid:8443',
    ]);
  });
});
