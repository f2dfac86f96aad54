import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertRealBackendCanRun } from '../dot1x/real-lab.js';
import { PFX_PASSWORD, useLabPki } from '../support/lab-pki.js';
import {
  DNS,
  GATEWAY,
  LAPTOP_ADDRESS,
  LAPTOP_ROUTE,
  MD5_PASSWORD,
  PEAP_PASSWORD,
  PortLab,
  preflightLeftovers,
  runInLaptop,
  type LaptopState,
} from './port-lab.js';
import { ADMIN_PASSWORD, parseReport, preflightStick, type PreflightJson } from './preflight-stick.js';

/**
 * `mpprov preflight` against a real switch port: hostapd (wired, its internal EAP server as
 * RADIUS) and dnsmasq in one namespace, the CLI in the laptop's, over a veth. Every case asserts
 * the outcome with the supplicant's cause, that the laptop's port is as it was, that nothing of
 * the run is left, and that no secret reached the output.
 */

const pki = useLabPki();
let lab: PortLab;
let before: LaptopState;

beforeAll(() => {
  assertRealBackendCanRun();
  lab = new PortLab();
  before = lab.laptopState();
  expect(before.addresses).toContain(LAPTOP_ADDRESS);
  expect(before.routes).toContain(`${LAPTOP_ROUTE} via 10.29.7.1`);
});
afterEach(async () => lab.stopDaemons());
afterAll(() => lab?.close());

const SECRETS = [PEAP_PASSWORD, MD5_PASSWORD, PFX_PASSWORD, ADMIN_PASSWORD];

const PEAP = (password = PEAP_PASSWORD, identity = 'alice', ca = 'ca.pem') =>
  `dot1x: { eap: peap, inner: mschapv2, identity: ${identity}, anonymous_identity: anonymous, password: "${password}", ca_cert: ${ca} }`;

async function preflight(
  stick: string,
  extra: readonly string[] = [],
): Promise<{ code: number | null; report: PreflightJson; stderr: string }> {
  const run = await runInLaptop(lab, [
    'preflight',
    stick,
    '--port',
    lab.laptopIf,
    '--json',
    // Room for a loaded machine: a verdict ends the wait as soon as the supplicant has one, so only
    // the cases that pass a shorter --timeout of their own (no answer at all) wait it out.
    '--timeout',
    '12',
    ...extra,
  ]);
  for (const secret of SECRETS) {
    expect(run.stdout).not.toContain(secret);
    expect(run.stderr).not.toContain(secret);
  }
  expect(lab.laptopState()).toEqual(before);
  expect(preflightLeftovers(run.pid, lab.laptopIf)).toEqual({ namespaces: [], dirs: [], daemons: [] });
  return { code: run.code, report: parseReport(run.stdout), stderr: run.stderr };
}

describe('802.1X on the port', () => {
  it('PEAP-MSCHAPv2 with the right password: authenticated, a DHCP address, the gateway answers, the routes fit', async () => {
    await lab.startAuthenticator(pki.dir);
    await lab.startDhcp();
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: dhcp, routes: [{ to: 10.50.0.0/16, via: 10.29.0.254 }] }\n  ${PEAP()}`,
      ['ca.pem'],
    );
    const { code, report } = await preflight(stick);
    expect(report).toMatchObject({
      port: lab.laptopIf,
      monitoring_point: 'mp-lab',
      interface: 'eth1',
      dot1x: {
        outcome: 'authenticated',
        method: 'PEAP-MSCHAPv2',
        cause: 'the port accepted PEAP-MSCHAPv2 for identity "alice"',
      },
      dhcp: { outcome: 'address', gateway: GATEWAY, dns: [DNS] },
      gateway_answers: true,
      fits: true,
      problems: [],
    });
    expect(report.dhcp.address).toMatch(/^10\.29\.0\.(1[0-4]\d|150)\/24$/);
    expect(code).toBe(0);
  });

  it('a wrong password: refused, RADIUS rejected the password (MSCHAPv2 error 691), no DHCP tried', async () => {
    await lab.startAuthenticator(pki.dir);
    await lab.startDhcp();
    const stick = preflightStick(pki, `eth1:\n  ipv4: { method: dhcp }\n  ${PEAP('Wrong-Password-1')}`, ['ca.pem']);
    const { code, report } = await preflight(stick);
    expect(report.dot1x).toEqual({
      outcome: 'refused',
      method: 'PEAP-MSCHAPv2',
      cause: 'RADIUS rejected the password of identity "alice" (MSCHAPv2 error 691)',
    });
    expect(report.dhcp).toEqual({ outcome: 'skipped' });
    expect(report.problems).toEqual([`802.1X: ${report.dot1x.cause}`]);
    expect(code).toBe(1);
  });

  it('a wrong identity: refused, RADIUS rejected the identity', async () => {
    await lab.startAuthenticator(pki.dir);
    const stick = preflightStick(pki, `eth1:\n  ipv4: { method: dhcp }\n  ${PEAP(PEAP_PASSWORD, 'mallory')}`, [
      'ca.pem',
    ]);
    const { code, report } = await preflight(stick);
    expect(report.dot1x.outcome).toBe('refused');
    expect(report.dot1x.cause).toBe(
      'RADIUS rejected the identity "mallory": it ended the inner MSCHAPv2 exchange before checking a password',
    );
    expect(code).toBe(1);
  });

  it("the server's certificate is not issued by the stick's ca_cert: server-not-trusted, naming the certificate", async () => {
    await lab.startAuthenticator(pki.dir);
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: dhcp }\n  ${PEAP(PEAP_PASSWORD, 'alice', 'rogue-ca.pem')}`,
      ['rogue-ca.pem'],
    );
    const { code, report } = await preflight(stick);
    expect(report.dot1x.outcome).toBe('server-not-trusted');
    expect(report.dot1x.cause).toMatch(/^the authentication server's certificate is not issued by ca_cert: "\/CN=/);
    expect(code).toBe(1);
  });

  it('EAP-TLS with a PFX: authenticated', async () => {
    await lab.startAuthenticator(pki.dir);
    await lab.startDhcp();
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: dhcp }\n  dot1x: { eap: tls, identity: client.lab.test, ca_cert: ca.pem, private_key: client.pfx, private_key_password: "${PFX_PASSWORD}" }`,
      ['ca.pem', 'client.pfx'],
    );
    const { code, report } = await preflight(stick);
    expect(report.dot1x).toEqual({
      outcome: 'authenticated',
      method: 'EAP-TLS',
      cause: 'the port accepted EAP-TLS for identity "client.lab.test"',
    });
    expect(report.fits).toBeNull();
    expect(code).toBe(0);
  });

  it('EAP-TLS with a client certificate from a foreign CA: refused, RADIUS ended the TLS handshake', async () => {
    await lab.startAuthenticator(pki.dir);
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: dhcp }\n  dot1x: { eap: tls, identity: client.lab.test, ca_cert: ca.pem, client_cert: rogue-client.pem, private_key: rogue-client.key }`,
      ['ca.pem', 'rogue-client.pem', 'rogue-client.key'],
    );
    const { code, report } = await preflight(stick);
    expect(report.dot1x).toEqual({
      outcome: 'refused',
      method: 'EAP-TLS',
      cause:
        'RADIUS refused the client certificate of identity "client.lab.test": it ended the TLS handshake (a certificate it does not trust, expired, or revoked)',
    });
    expect(code).toBe(1);
  });

  it('EAP-TLS with an expired client certificate: the stick is refused before the port is touched', async () => {
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: dhcp }\n  dot1x: { eap: tls, identity: client.lab.test, ca_cert: ca.pem, client_cert: expired-client.pem, private_key: expired-client.key }`,
      ['ca.pem', 'expired-client.pem', 'expired-client.key'],
    );
    const { code, report } = await preflight(stick);
    expect(report.dot1x.outcome).toBe('error');
    expect(report.problems.join('\n')).toContain('expired on 2021-01-01');
    expect(code).toBe(1);
  });

  it('EAP-TLS with an expired client certificate, tried anyway: refused, RADIUS ended the TLS handshake', async () => {
    await lab.startAuthenticator(pki.dir);
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: dhcp }\n  dot1x: { eap: tls, identity: client.lab.test, ca_cert: ca.pem, client_cert: expired-client.pem, private_key: expired-client.key }`,
      ['ca.pem', 'expired-client.pem', 'expired-client.key'],
    );
    // The command refuses this stick (above); the preflight itself, given it unchecked, shows what the port says.
    const script = fileURLToPath(new URL('./run-unvalidated.mjs', import.meta.url));
    const run = await runInLaptop(lab, [join(stick, 'mpprov.yaml'), lab.laptopIf], undefined, script);
    expect(run.code).toBe(0);
    expect(parseReport(run.stdout).dot1x).toEqual({
      outcome: 'refused',
      method: 'EAP-TLS',
      cause:
        'RADIUS refused the client certificate of identity "client.lab.test": it ended the TLS handshake (a certificate it does not trust, expired, or revoked)',
    });
    expect(lab.laptopState()).toEqual(before);
    expect(preflightLeftovers(run.pid, lab.laptopIf)).toEqual({ namespaces: [], dirs: [], daemons: [] });
  });

  it('EAP-MD5 with the right password: authenticated', async () => {
    await lab.startAuthenticator(pki.dir);
    await lab.startDhcp();
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: dhcp }\n  dot1x: { eap: md5, identity: md5user, password: "${MD5_PASSWORD}" }`,
    );
    const { code, report } = await preflight(stick);
    expect(report.dot1x.outcome).toBe('authenticated');
    expect(report.dot1x.method).toBe('EAP-MD5');
    expect(code).toBe(0);
  });

  it('no authenticator on the port: no-authenticator within the timeout, exit 1', async () => {
    await lab.startDhcp();
    const stick = preflightStick(pki, `eth1:\n  ipv4: { method: dhcp }\n  ${PEAP()}`, ['ca.pem']);
    const { code, report } = await preflight(stick, ['--timeout', '3']);
    expect(report.dot1x).toEqual({
      outcome: 'no-authenticator',
      method: 'PEAP-MSCHAPv2',
      cause: 'no authenticator answered within 3 s: the port has no 802.1X',
    });
    expect(report.dhcp.outcome).toBe('skipped');
    expect(code).toBe(1);
  });
});

describe('addresses on the port', () => {
  it('no DHCP answer: no-answer, exit 1', async () => {
    await lab.startAuthenticator(pki.dir);
    const stick = preflightStick(pki, `eth1:\n  ipv4: { method: dhcp }\n  ${PEAP()}`, ['ca.pem']);
    const { code, report } = await preflight(stick, ['--timeout', '3']);
    expect(report.dot1x.outcome).toBe('authenticated');
    expect(report.dhcp).toEqual({ outcome: 'no-answer' });
    expect(report.problems).toEqual([`DHCP: no server answered on ${lab.laptopIf} within 3 s`]);
    expect(code).toBe(1);
  });

  it('a route whose next hop is outside the leased subnet: fits is false, exit 1', async () => {
    await lab.startAuthenticator(pki.dir);
    await lab.startDhcp();
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: dhcp, routes: [{ to: 10.50.0.0/16, via: 192.0.2.254 }] }\n  ${PEAP()}`,
      ['ca.pem'],
    );
    const { code, report } = await preflight(stick);
    expect(report.fits).toBe(false);
    expect(report.problems).toEqual([
      `the stick routes through 192.0.2.254, which is outside the subnet ${report.dhcp.address ?? ''} the port's DHCP gave`,
    ]);
    expect(code).toBe(1);
  });

  it("the MP's management address inside the leased subnet: fits is true, exit 0", async () => {
    await lab.startAuthenticator(pki.dir);
    await lab.startDhcp();
    // The url is data here: preflight never connects to it.
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: dhcp }\n  ${PEAP()}`,
      ['ca.pem'],
      '',
      'https://10.29.0.40',
    );
    const { code, report } = await preflight(stick);
    expect(report.dhcp.outcome).toBe('address');
    expect(report.fits).toBe(true);
    expect(report.problems).toEqual([]);
    expect(code).toBe(0);
  });

  it('a static interface without 802.1X: not-configured, its address set for the test, its gateway answers', async () => {
    const stick = preflightStick(pki, `eth1:\n  ipv4: { method: static, address: 10.29.0.20/24, gateway: ${GATEWAY} }`);
    const { code, report } = await preflight(stick, ['--interface', 'eth1']);
    expect(report).toMatchObject({
      dot1x: { outcome: 'not-configured', cause: 'the stick gives eth1 no 802.1X' },
      dhcp: { outcome: 'skipped' },
      gateway_answers: true,
      fits: true,
      problems: [],
    });
    expect(code).toBe(0);
  });

  it('without --json: the same verdict as lines a technician reads, nothing of the run left', async () => {
    const stick = preflightStick(pki, `eth1:\n  ipv4: { method: static, address: 10.29.0.20/24, gateway: ${GATEWAY} }`);
    const run = await runInLaptop(lab, ['preflight', stick, '--port', lab.laptopIf, '--interface', 'eth1']);
    expect(run.stdout).toBe(
      [
        `port ${lab.laptopIf}: mp-lab eth1`,
        '  802.1X: not-configured: the stick gives eth1 no 802.1X',
        '  DHCP: skipped',
        '  gateway answers: yes',
        '  addresses fit: yes',
        '',
      ].join('\n'),
    );
    expect(run.stderr).toContain(`preflight: giving ${lab.laptopIf} back as it was`);
    expect(run.code).toBe(0);
    expect(lab.laptopState()).toEqual(before);
  });

  it('a static interface whose gateway is not on this port: fits is false, exit 1', async () => {
    const stick = preflightStick(pki, `eth1:\n  ipv4: { method: static, address: 10.29.0.20/24, gateway: 10.29.0.9 }`);
    const { code, report } = await preflight(stick, ['--interface', 'eth1']);
    expect(report.gateway_answers).toBe(false);
    expect(report.fits).toBe(false);
    expect(report.problems).toEqual([
      "the stick's gateway 10.29.0.9 did not answer on this port with 10.29.0.20/24: the port is not in that subnet or VLAN",
    ]);
    expect(code).toBe(1);
  });

  it('a VLAN interface: the parent 802.1X is tried, then the VLAN is refused by this kernel (no 802.1Q), exit 1', async () => {
    await lab.startAuthenticator(pki.dir);
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: manual }\n  ${PEAP()}\neth1.100:\n  vlan: { link: eth1, id: 100 }\n  ipv4: { method: dhcp }`,
      ['ca.pem'],
    );
    const { code, report } = await preflight(stick, ['--interface', 'eth1.100']);
    expect(report.dot1x.outcome).toBe('authenticated');
    expect(report.dhcp).toEqual({ outcome: 'skipped' });
    expect(report.problems).toEqual([
      `this laptop's kernel cannot make 802.1Q VLAN interfaces ("ip link add ... type vlan": Error: Unknown device type.), so VLAN 100 on ${lab.laptopIf} was not tried: load the 8021q module or use a laptop whose kernel has it`,
    ]);
    expect(code).toBe(1);
  });
});
