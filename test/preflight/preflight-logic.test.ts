import { describe, expect, it } from 'vitest';
import { Secret, type Interface } from '../../src/config/index.js';
import { ipv4UrlHost, judgeFit } from '../../src/preflight/address-fit.js';
import { parseLeaseLine } from '../../src/preflight/dhcp-client.js';
import { parsePortState, restoreCommands } from '../../src/preflight/port-state.js';
import { selectTarget } from '../../src/preflight/select-target.js';
import { renderSupplicantConfig } from '../../src/preflight/supplicant-config.js';
import { readVerdict, verdictAtDeadline } from '../../src/preflight/supplicant-verdict.js';
import { vlanAddArgs, vlanLinkName, vlanRefusal } from '../../src/preflight/vlan-link.js';
import type { StickFile } from '../../src/config/schema.js';

/**
 * The preflight's pure parts, where no real part reaches: the VLAN logic (this machine's kernel
 * has no 802.1Q, so the real test can only prove the refusal), the fit judgement, the reading of
 * the supplicant's and udhcpc's lines (hostile ones too), the saved port state and the choice of
 * Monitoring Point and interface.
 */

type Dot1x = NonNullable<Interface['dot1x']>;

describe('the VLAN on the laptop port', () => {
  it('is made as an 802.1Q link on the port inside the namespace, named short', () => {
    expect(vlanAddArgs('enp0s31f6', 100)).toEqual([
      'link',
      'add',
      'link',
      'enp0s31f6',
      'name',
      'vlan100',
      'type',
      'vlan',
      'id',
      '100',
    ]);
    expect(vlanLinkName(4094).length).toBeLessThanOrEqual(15);
  });

  it('says 802.1Q when the kernel does not know the link type, and quotes ip otherwise', () => {
    expect(vlanRefusal('Error: Unknown device type.\n', 'eth0', 7)).toBe(
      `this laptop's kernel cannot make 802.1Q VLAN interfaces ("ip link add ... type vlan": Error: Unknown device type.), so VLAN 7 on eth0 was not tried: load the 8021q module or use a laptop whose kernel has it`,
    );
    expect(vlanRefusal('RTNETLINK answers: File exists', 'eth0', 7)).toBe(
      'the VLAN 7 on eth0 could not be made ("ip link add ... type vlan": RTNETLINK answers: File exists), so it was not tried',
    );
  });
});

describe('whether the addresses fit', () => {
  const dhcp = (routes: { to: string; via: string }[] = []): Interface => ({ ipv4: { method: 'dhcp', routes } });
  it('DHCP: next hops inside the leased subnet fit, one outside does not, none cannot be judged', () => {
    const lease = { address: '10.1.2.3', prefix: 24 };
    expect(judgeFit(dhcp([{ to: '10.9.0.0/16', via: '10.1.2.254' }]), lease, true)).toEqual({
      fits: true,
      problems: [],
    });
    expect(judgeFit(dhcp([{ to: '10.9.0.0/16', via: '10.1.3.1' }]), lease, true)).toEqual({
      fits: false,
      problems: ["the stick routes through 10.1.3.1, which is outside the subnet 10.1.2.3/24 the port's DHCP gave"],
    });
    expect(judgeFit(dhcp(), lease, true)).toEqual({ fits: null, problems: [] });
  });

  it("DHCP: the MP's management address inside the leased subnet fits; outside it says nothing; a route outside still does not fit", () => {
    const lease = { address: '10.1.2.3', prefix: 24 };
    expect(judgeFit(dhcp(), lease, true, '10.1.2.40')).toEqual({ fits: true, problems: [] });
    // Another interface, perhaps one the stick does not list, may carry it.
    expect(judgeFit(dhcp(), lease, true, '192.0.2.10')).toEqual({ fits: null, problems: [] });
    expect(judgeFit(dhcp([{ to: '10.9.0.0/16', via: '10.1.2.254' }]), lease, true, '192.0.2.10').fits).toBe(true);
    expect(judgeFit(dhcp([{ to: '10.9.0.0/16', via: '10.1.3.1' }]), lease, true, '10.1.2.40')).toEqual({
      fits: false,
      problems: ["the stick routes through 10.1.3.1, which is outside the subnet 10.1.2.3/24 the port's DHCP gave"],
    });
  });

  it("the url's host counts only as an IPv4 address: a name or an IPv6 address is not judged", () => {
    expect(ipv4UrlHost('https://10.1.2.40:8443')).toBe('10.1.2.40');
    expect(ipv4UrlHost('https://mp01.corp.example')).toBeUndefined();
    expect(ipv4UrlHost('https://[2001:db8::10]')).toBeUndefined();
    expect(ipv4UrlHost('not a url')).toBeUndefined();
  });

  it('static: the gateway answering decides; without a gateway it cannot be judged', () => {
    const iface: Interface = { ipv4: { method: 'static', address: '10.1.2.3/24', gateway: '10.1.2.1' } };
    const given = { address: '10.1.2.3', prefix: 24, gateway: '10.1.2.1' };
    expect(judgeFit(iface, given, true).fits).toBe(true);
    expect(judgeFit(iface, given, false).fits).toBe(false);
    expect(judgeFit({ ipv4: { method: 'static', address: '10.1.2.3/24' } }, given, null).fits).toBeNull();
  });
});

describe("the supplicant's lines", () => {
  const context = { method: 'PEAP-MSCHAPv2', identity: 'alice' } as const;
  it('decide nothing before an EAP result', () => {
    expect(readVerdict(['eth0: Associated with 01:80:c2:00:00:03'], context)).toBeUndefined();
  });

  it('escape what the server says before it enters a sentence', () => {
    const verdict = readVerdict(
      ["eth0: CTRL-EVENT-EAP-TLS-CERT-ERROR reason=1 depth=0 subject='/CN=evil\u001b[31m\u0007' err='bad\u009b'"],
      context,
    );
    expect(verdict?.outcome).toBe('server-not-trusted');
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    expect(verdict?.cause).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(verdict?.cause).toContain('\\x1b[31m\\x07');
  });

  it('a server proposing another method: refused, naming the method it proposed', () => {
    const verdict = readVerdict(
      ['CTRL-EVENT-EAP-STARTED', 'CTRL-EVENT-EAP-PROPOSED-METHOD vendor=0 method=13', 'CTRL-EVENT-EAP-FAILURE'],
      context,
    );
    expect(verdict?.cause).toBe(
      'the authentication server refused PEAP-MSCHAPv2 for identity "alice" (it proposed EAP method 13 instead)',
    );
  });

  it('at the deadline: no authenticator when EAP never started, an error when it stalled', () => {
    expect(verdictAtDeadline([], 'EAP-TLS', 30).outcome).toBe('no-authenticator');
    expect(verdictAtDeadline(['CTRL-EVENT-EAP-STARTED'], 'EAP-TLS', 30)).toEqual({
      outcome: 'error',
      method: 'EAP-TLS',
      cause: 'the authentication started but did not finish within 30 s',
    });
  });
});

describe("udhcpc's lease line", () => {
  it('reads address, prefix, gateway and DNS', () => {
    expect(parseLeaseLine('MPPF-LEASE ip=10.1.2.3 mask=24 router=10.1.2.1 10.1.2.2 dns=10.0.0.53 10.0.0.54')).toEqual({
      address: '10.1.2.3',
      prefix: 24,
      gateway: '10.1.2.1',
      dns: ['10.0.0.53', '10.0.0.54'],
    });
  });

  it('takes nothing malformed from a hostile server', () => {
    expect(parseLeaseLine('MPPF-LEASE ip=10.1.2.3;reboot mask=24 router= dns=')).toBeUndefined();
    expect(parseLeaseLine('MPPF-LEASE ip=10.1.2.3 mask=99 router= dns=')).toBeUndefined();
    expect(parseLeaseLine('MPPF-LEASE ip=10.1.2.3 mask=24 router=$(x) dns=1.2.3.4\u001b')).toEqual({
      address: '10.1.2.3',
      prefix: 24,
      dns: [],
    });
  });
});

describe('the supplicant configuration', () => {
  it('carries a password with a quote or a line break only as hex: the stick cannot add options', () => {
    const dot1x: Dot1x = {
      eap: 'peap',
      identity: 'alice"\nnetwork={',
      password: new Secret('pw"\nx=1'),
    };
    const text = renderSupplicantConfig(dot1x, { caCert: '/private/caCert.pem' });
    expect(text.split('\n').filter((l) => l.includes('network={'))).toHaveLength(1);
    expect(text).toContain(`\tidentity=${Buffer.from('alice"\nnetwork={').toString('hex')}`);
    expect(text).toContain(`\tpassword=${Buffer.from('pw"\nx=1').toString('hex')}`);
    expect(text).toContain('\tphase2="auth=MSCHAPV2"');
  });
});

describe("the port's saved state", () => {
  it('keeps global addresses and non-kernel routes, and puts them back link first', () => {
    const state = parsePortState(
      'eth0',
      JSON.stringify([
        {
          ifname: 'eth0',
          flags: ['BROADCAST', 'UP'],
          addr_info: [
            { family: 'inet', local: '10.1.2.3', prefixlen: 24, scope: 'global', broadcast: '10.1.2.255' },
            { family: 'inet6', local: 'fe80::1', prefixlen: 64, scope: 'link' },
          ],
        },
      ]),
      JSON.stringify([
        { dst: 'default', gateway: '10.1.2.1', protocol: 'dhcp', metric: 100, flags: [] },
        { dst: '10.1.2.0/24', protocol: 'kernel', scope: 'link', prefsrc: '10.1.2.3', flags: [] },
      ]),
      '[]',
    );
    expect(restoreCommands(state)).toEqual([
      ['link', 'set', 'eth0', 'up'],
      ['-4', 'addr', 'replace', '10.1.2.3/24', 'broadcast', '10.1.2.255', 'dev', 'eth0'],
      ['-4', 'route', 'replace', 'default', 'via', '10.1.2.1', 'dev', 'eth0', 'proto', 'dhcp', 'metric', '100'],
    ]);
  });
});

describe('choosing the Monitoring Point and interface', () => {
  const model = (names: string[], interfaces: Record<string, Interface>): StickFile => ({
    version: 1,
    monitoring_points: names.map((name) => ({ name, url: 'https://192.0.2.10', interfaces })),
  });
  const peap: Dot1x = { eap: 'peap', identity: 'a' };

  it('several Monitoring Points or 802.1X interfaces, or an unknown name: a usage sentence naming the choices', () => {
    expect(selectTarget(model(['a', 'b'], {}), {})).toEqual({
      usage: 'the stick has 2 Monitoring Points: choose one with --monitoring-point ("a", "b")',
    });
    expect(selectTarget(model(['a'], { eth0: { dot1x: peap }, eth1: { dot1x: peap } }), {})).toEqual({
      usage: 'a has 2 802.1X interfaces: choose one with --interface ("eth0", "eth1")',
    });
    expect(selectTarget(model(['a'], { eth0: { dot1x: peap } }), { interface: 'eth9' })).toEqual({
      usage: 'a has no interface "eth9": it has "eth0"',
    });
  });

  it("a VLAN interface takes its parent's 802.1X", () => {
    const choice = selectTarget(
      model(['a'], { eth0: { dot1x: peap }, 'eth0.7': { vlan: { link: 'eth0', id: 7 }, ipv4: { method: 'dhcp' } } }),
      { interface: 'eth0.7' },
    );
    expect('target' in choice && choice.target.vlan).toEqual({ parent: 'eth0', id: 7 });
    expect('target' in choice && choice.target.dot1x?.path).toEqual([
      'monitoring_points',
      0,
      'interfaces',
      'eth0',
      'dot1x',
    ]);
  });
});
