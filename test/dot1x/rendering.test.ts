import { describe, expect, it } from 'vitest';
import type { AuthenticatorProfile } from '../../src/simulator/authenticator-profile.js';
import { SupplicantVerdict, type AttemptObservation } from '../../src/simulator/eap-attempt.js';
import { judgeAttempt, type AttemptContext } from '../../src/simulator/eap-outcome.js';
import { renderEapUserFile, renderHostapdConfig } from '../../src/simulator/hostapd-config.js';
import { checkRealBackendPrerequisites } from '../../src/simulator/real-backend-prerequisites.js';
import type { Stanza } from '../../src/simulator/stanza.js';
import { quote, renderWpaSupplicantConfig, WPA_SUPPLICANT_OPTIONS } from '../../src/simulator/wpa-supplicant-config.js';

/**
 * The pure halves of the real 802.1X backend: what a stanza means to wpa_supplicant, what a
 * switch-port profile means to hostapd, how the daemons' lines become a verdict, and the
 * sentence naming what the machine lacks.
 */

const at = (slot: string, name: string) => `/lab/${slot}-${name}`;
const wired = { name: 'eth1', family: 'inet', method: 'dhcp', wpa_key_mgmt: 'IEEE8021X' } as const;

describe('renderWpaSupplicantConfig: an Admin API stanza on the wire', () => {
  it('PEAP-MSCHAPv2, as a wired Monitoring Point runs it', () => {
    const stanza: Stanza = {
      ...wired,
      wpa_eap: 'PEAP',
      wpa_identity: 'mp01@corp.example',
      wpa_anonymous_identity: 'anonymous@corp.example',
      wpa_password: 'example-peap-password',
      wpa_phase1: 'peapver=0',
      wpa_phase2: 'auth=MSCHAPV2',
      wpa_ca_cert: 'ca-3f9a1c.pem',
    };
    expect(renderWpaSupplicantConfig(stanza, at, { ctrlInterface: '/run/wpas' })).toBe(
      [
        'ctrl_interface=/run/wpas',
        'ap_scan=0',
        'network={',
        '\tkey_mgmt=IEEE8021X',
        '\teapol_flags=0',
        '\teap=PEAP',
        '\tidentity="mp01@corp.example"',
        '\tanonymous_identity="anonymous@corp.example"',
        '\tpassword="example-peap-password"',
        '\tphase1="peapver=0"',
        '\tphase2="auth=MSCHAPV2"',
        '\tca_cert="/lab/wpa_ca_cert-ca-3f9a1c.pem"',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('EAP-TLS from a PFX: private_key and its password, no client_cert', () => {
    const text = renderWpaSupplicantConfig(
      {
        ...wired,
        wpa_eap: 'TLS',
        wpa_identity: 'mp01',
        wpa_ca_cert: 'ca.pem',
        wpa_private_key: 'key.p12',
        wpa_private_key_passwd: 'pfx pass',
      },
      at,
    );
    expect(text).toBe(
      'ap_scan=0\nnetwork={\n\tkey_mgmt=IEEE8021X\n\teapol_flags=0\n\teap=TLS\n\tidentity="mp01"\n' +
        '\tca_cert="/lab/wpa_ca_cert-ca.pem"\n\tprivate_key="/lab/wpa_private_key-key.p12"\n\tprivate_key_passwd="pfx pass"\n}\n',
    );
  });

  it('PEAP with inner EAP-TLS: the second set becomes ca_cert2, client_cert2, private_key2', () => {
    const text = renderWpaSupplicantConfig(
      {
        ...wired,
        wpa_eap: 'PEAP',
        wpa_identity: 'mp01',
        wpa_phase2: 'auth=TLS',
        wpa_ca_cert: 'ca.pem',
        wpa_ca_cert2: 'ca.pem',
        wpa_client_cert2: 'inner.pem',
        wpa_private_key2: 'inner.key',
        wpa_private_key2_passwd: 'k2',
      },
      at,
    );
    expect(text).toContain(
      '\tphase2="auth=TLS"\n\tca_cert="/lab/wpa_ca_cert-ca.pem"\n\tca_cert2="/lab/wpa_ca_cert2-ca.pem"\n' +
        '\tclient_cert2="/lab/wpa_client_cert2-inner.pem"\n\tprivate_key2="/lab/wpa_private_key2-inner.key"\n\tprivate_key2_passwd="k2"\n',
    );
  });

  it('EAP-MD5', () => {
    expect(renderWpaSupplicantConfig({ ...wired, wpa_eap: 'MD5', wpa_identity: 'mp01', wpa_password: 'pw' }, at)).toBe(
      'ap_scan=0\nnetwork={\n\tkey_mgmt=IEEE8021X\n\teapol_flags=0\n\teap=MD5\n\tidentity="mp01"\n\tpassword="pw"\n}\n',
    );
  });

  it('writes text that is not plain printable ASCII as hex, which wpa_supplicant reads for every string option', () => {
    expect(quote('plain "quoted" #text')).toBe('"plain "quoted" #text"');
    expect(quote('pässword')).toBe(Buffer.from('pässword').toString('hex'));
    expect(quote('two\nlines')).toBe('74776f0a6c696e6573');
    const text = renderWpaSupplicantConfig(
      { ...wired, wpa_eap: 'MD5', wpa_identity: 'jürgen', wpa_password: 'p"w' },
      at,
    );
    expect(text).toContain(`\tidentity=${Buffer.from('jürgen').toString('hex')}\n\tpassword="p"w"\n`);
  });

  it('runs no supplicant for a wired stanza without 802.1X', () => {
    expect(renderWpaSupplicantConfig({ name: 'eth1', family: 'inet', method: 'dhcp' }, at)).toBeUndefined();
  });

  it('wireless: ssid with WPA-EAP, a passphrase or a hex PSK, or an open network', () => {
    const wifi = { name: 'wlan0', family: 'inet', method: 'dhcp', ssid: 'corp' } as const;
    expect(
      renderWpaSupplicantConfig(
        {
          ...wifi,
          security: 'wpa2_enterprise',
          wpa_key_mgmt: 'WPA-EAP',
          wpa_eap: 'PEAP',
          wpa_identity: 'x',
          wpa_password: 'y',
          wpa_phase2: 'auth=MSCHAPV2',
        },
        at,
      ),
    ).toBe(
      'network={\n\tssid="corp"\n\tkey_mgmt=WPA-EAP\n\tproto=RSN\n\teap=PEAP\n\tidentity="x"\n\tpassword="y"\n\tphase2="auth=MSCHAPV2"\n}\n',
    );
    expect(renderWpaSupplicantConfig({ ...wifi, security: 'wpa2_personal', passphrase: 'correct horse' }, at)).toBe(
      'network={\n\tssid="corp"\n\tkey_mgmt=WPA-PSK\n\tproto=RSN\n\tpsk="correct horse"\n}\n',
    );
    expect(
      renderWpaSupplicantConfig({ ...wifi, security: 'wpa2_personal', passphrase: 'ab'.repeat(32) }, at),
    ).toContain(`\tpsk=${'ab'.repeat(32)}\n`);
    expect(renderWpaSupplicantConfig({ ...wifi, security: 'open' }, at)).toBe(
      'network={\n\tssid="corp"\n\tkey_mgmt=NONE\n}\n',
    );
  });

  it('maps every wpa_* field of the Admin API model to a wpa_supplicant option', () => {
    expect(WPA_SUPPLICANT_OPTIONS).toMatchObject({
      wpa_key_mgmt: 'key_mgmt',
      wpa_eap: 'eap',
      wpa_identity: 'identity',
      wpa_anonymous_identity: 'anonymous_identity',
      wpa_password: 'password',
      wpa_phase1: 'phase1',
      wpa_phase2: 'phase2',
      wpa_ca_cert: 'ca_cert',
      wpa_client_cert: 'client_cert',
      wpa_private_key: 'private_key',
      wpa_private_key_passwd: 'private_key_passwd',
      wpa_ca_cert2: 'ca_cert2',
      wpa_client_cert2: 'client_cert2',
      wpa_private_key2: 'private_key2',
      wpa_private_key2_passwd: 'private_key2_passwd',
    });
  });
});

const pem = (path: string) => ({ path, pem: '' });
const PROFILE: AuthenticatorProfile = {
  eapMethods: ['peap', 'tls', 'md5'],
  clientCa: pem('/p/client-ca.pem'),
  serverCert: pem('/p/server.pem'),
  serverKey: pem('/p/server.key'),
  serverId: 'radius.test.invalid',
  users: [
    { identity: 'mp01@corp.example', password: 'peap-pw', methods: ['peap-mschapv2'] },
    { identity: 'mp01@corp.example', methods: ['tls', 'peap-tls'] },
    { identity: 'mp01', password: 'md5-pw', methods: ['md5'] },
    { identity: 'mp01', password: 'second-md5-pw', methods: ['md5', 'peap-mschapv2'] },
  ],
};

describe('renderEapUserFile: the port profile for hostapd', () => {
  it('one phase-1 line per identity (entries add up, PEAP always allowed outside), the PEAP wildcard last, then the [2] lines', () => {
    expect(renderEapUserFile(PROFILE)).toBe(
      [
        '# phase 1 (outer identity): the first matching line wins',
        '"mp01@corp.example"\tTLS,PEAP',
        '"mp01"\tMD5,PEAP\t"md5-pw"',
        '*\tPEAP',
        '# phase 2 (inside the PEAP tunnel)',
        '"mp01@corp.example"\tMSCHAPV2,TLS\t"peap-pw"\t[2]',
        '"mp01"\tMSCHAPV2\t"second-md5-pw"\t[2]',
        '',
      ].join('\n'),
    );
  });

  it('leaves out what the port does not offer', () => {
    expect(renderEapUserFile({ ...PROFILE, eapMethods: ['md5'] })).toBe(
      '# phase 1 (outer identity): the first matching line wins\n"mp01"\tMD5\t"md5-pw"\n# phase 2 (inside the PEAP tunnel)\n',
    );
  });

  it('writes a password hostapd cannot read between quotes as hex', () => {
    const text = renderEapUserFile({
      eapMethods: ['md5'],
      users: [{ identity: 'u', password: 'a"b', methods: ['md5'] }],
    });
    expect(text).toContain(`"u"\tMD5\t${Buffer.from('a"b').toString('hex')}\n`);
  });

  it('refuses an identity hostapd cannot read', () => {
    expect(() =>
      renderEapUserFile({ eapMethods: ['md5'], users: [{ identity: 'a"b', password: 'p', methods: ['md5'] }] }),
    ).toThrow(
      `identity "a\\"b" (it holds a double quote or a line break) cannot be written to hostapd's eap_user file`,
    );
  });
});

describe('renderHostapdConfig', () => {
  it('the wired driver with its internal EAP server, as the lab proved', () => {
    expect(
      renderHostapdConfig(PROFILE, {
        interface: 'mpsX-1a',
        ctrlInterface: '/lab/hostapd',
        eapUserFile: '/lab/eap_user',
        clientCa: '/lab/ca.pem',
        serverCert: '/lab/s.pem',
        serverKey: '/lab/s.key',
      }),
    ).toBe(
      [
        'interface=mpsX-1a',
        'driver=wired',
        'ctrl_interface=/lab/hostapd',
        'logger_stdout=-1',
        'logger_stdout_level=1',
        'ieee8021x=1',
        'eapol_version=2',
        'use_pae_group_addr=1',
        'eap_reauth_period=0',
        'eap_server=1',
        'eap_user_file=/lab/eap_user',
        'ca_cert=/lab/ca.pem',
        'server_cert=/lab/s.pem',
        'private_key=/lab/s.key',
        'server_id=radius.test.invalid',
        '',
      ].join('\n'),
    );
  });
});

describe('judgeAttempt: the verdict from both daemons', () => {
  const context: AttemptContext = {
    method: 'EAP-TLS',
    identity: 'mp01',
    describeFile: (p) => (p === '/lab/wpa_private_key-k.p12' ? 'wpa_private_key "k.p12"' : undefined),
  };
  const seen = (over: Partial<AttemptObservation>): AttemptObservation => ({
    verdict: SupplicantVerdict.Failure,
    portAuthorized: false,
    hostapdLog: [],
    supplicantLog: [],
    timeoutMs: 10_000,
    ...over,
  });

  it('authorizes only with EAP success AND the port authorized', () => {
    expect(judgeAttempt(seen({ verdict: SupplicantVerdict.Success, portAuthorized: true }), context)).toEqual({
      authorized: true,
      reason: 'authorized on the wire by EAP-TLS as "mp01" (wpa_supplicant: EAP success; hostapd: port authorized)',
    });
    expect(judgeAttempt(seen({ verdict: SupplicantVerdict.Success, portAuthorized: false }), context)).toEqual({
      authorized: false,
      reason: 'wpa_supplicant reported EAP success, but hostapd did not authorize the port',
    });
  });

  it.each([
    [
      'the server certificate, refused by the supplicant',
      {
        supplicantLog: [
          "x: CTRL-EVENT-EAP-TLS-CERT-ERROR reason=1 depth=1 subject='/CN=Lab CA' err='self-signed certificate in certificate chain'",
        ],
      },
      'the supplicant rejects the authentication server: self-signed certificate in certificate chain (certificate /CN=Lab CA)',
    ],
    [
      'the client certificate, refused by the server',
      {
        hostapdLog: ["TLS: Certificate verification failed, error 10 (certificate has expired) depth 0 for '/CN=mp01'"],
      },
      'the authentication server rejects the client certificate /CN=mp01: certificate has expired',
    ],
    [
      'a key the supplicant cannot open',
      { supplicantLog: ["TLS: Failed to load private key '/lab/wpa_private_key-k.p12'"] },
      'wpa_supplicant cannot load wpa_private_key "k.p12" (wrong or missing password, or a form it cannot read)',
    ],
    [
      "a key that is not the certificate's",
      {
        supplicantLog: [
          'OpenSSL: tls_read_pkcs12 - Failed to use PKCS#12 file error:05800074:x509 certificate routines::key values mismatch',
          "TLS: Failed to load private key '/lab/wpa_private_key-k.p12'",
        ],
      },
      'wpa_supplicant cannot use wpa_private_key "k.p12": it does not match the client certificate',
    ],
    [
      'an MSCHAPv2 password',
      { supplicantLog: ["x: EAP-MSCHAPV2: failure message: 'FAILED' (retry not allowed, error 691)"] },
      'the authentication server refused the password of "mp01" (EAP-MSCHAPv2: retry not allowed, error 691)',
    ],
    [
      'a method the server does not let the identity use',
      { supplicantLog: ['x: CTRL-EVENT-EAP-PROPOSED-METHOD vendor=0 method=25 -> NAK'] },
      'the authentication server does not let "mp01" use EAP-TLS (it proposed PEAP): the identity is unknown to it or may not use that method',
    ],
    ['anything else', {}, 'the authentication server refused EAP-TLS for "mp01" (EAP failure)'],
  ])('explains a failure: %s', (_label, over, reason) => {
    expect(judgeAttempt(seen(over), context)).toEqual({ authorized: false, reason });
  });

  it('counts a timeout, a supplicant that stopped, and an authenticator that did not start as unauthorized', () => {
    expect(
      judgeAttempt(
        seen({ verdict: SupplicantVerdict.Timeout, supplicantLog: ['x: Associated with 01:80:c2:00:00:03'] }),
        context,
      ).reason,
    ).toBe('no EAP result within 10 s (last wpa_supplicant line: "x: Associated with 01:80:c2:00:00:03")');
    expect(
      judgeAttempt(seen({ verdict: SupplicantVerdict.Exited, supplicantLog: ['Line 7: invalid quotation'] }), context)
        .reason,
    ).toBe('wpa_supplicant stopped before any EAP result (last wpa_supplicant line: "Line 7: invalid quotation")');
    expect(
      judgeAttempt(
        seen({ verdict: SupplicantVerdict.NoAuthenticator, hostapdLog: ['Failed to set TLS parameters'] }),
        context,
      ),
    ).toEqual({
      authorized: false,
      reason:
        'the switch port\'s authenticator (hostapd) did not start (last hostapd line: "Failed to set TLS parameters")',
    });
  });
});

describe('checkRealBackendPrerequisites', () => {
  const all = (command: string) => `/usr/sbin/${command}`;

  it('is satisfied by root with the four commands', () => {
    expect(checkRealBackendPrerequisites({ uid: 0, find: all }).missing).toBeUndefined();
  });

  it('names everything missing in one sentence', () => {
    expect(checkRealBackendPrerequisites({ uid: 1000, find: (c) => (c === 'ip' ? all(c) : undefined) }).missing).toBe(
      'The real 802.1X backend needs root (this process runs as uid 1000) and the commands hostapd, hostapd_cli, wpa_supplicant ' +
        '(install with: apt-get install hostapd wpasupplicant).',
    );
    expect(
      checkRealBackendPrerequisites({ uid: 0, find: (c) => (c === 'wpa_supplicant' ? undefined : all(c)) }).missing,
    ).toBe('The real 802.1X backend needs the command wpa_supplicant (install with: apt-get install wpasupplicant).');
  });
});
