import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateStick } from '../../src/certs/index.js';
import { hasErrors } from '../../src/core/problem.js';
import { Secret } from '../../src/core/secret.js';
import { desiredDevice, type DesiredDevice } from '../../src/plan/index.js';
import { STATIC_DUAL_STACK_ETH1_INET, STATIC_DUAL_STACK_ETH1_LINK } from '../support/profile-expectations.js';

/**
 * desiredDevice translates a validated stick entry into the device's own field names. Pure: the
 * profiles are read by validateStick, then no device, no HTTPS. Each case is a checked-in profile.
 */

const profilesDir = fileURLToPath(new URL('../../profiles/', import.meta.url));

async function desiredFrom(profile: string): Promise<DesiredDevice> {
  const stick = await validateStick(join(profilesDir, profile));
  expect(hasErrors(stick.problems), JSON.stringify(stick.problems)).toBe(false);
  return desiredDevice(stick, 0);
}

/** A profile certificate's date, as the facts carry it (ISO 8601). */
function certDate(which: 'validFrom' | 'validTo', file = 'certs/mp01-inner-cert.pem'): string {
  return new Date(new X509Certificate(readFileSync(join(profilesDir, file)))[which]).toISOString();
}

/** `ca-<first 12 hex of the content's sha256>.pem`: the name the device is given for a file. */
function nameOf(prefix: string, file: string, extension = 'pem'): string {
  return `${prefix}-${createHash('sha256')
    .update(readFileSync(join(profilesDir, file)))
    .digest('hex')
    .slice(0, 12)}.${extension}`;
}

describe('desiredDevice', () => {
  it('turns a static dual-stack block into one stanza per family, in Admin API field names', async () => {
    const desired = await desiredFrom('static-dual-stack.yaml');
    const link = STATIC_DUAL_STACK_ETH1_LINK;
    expect(desired).toEqual({
      name: 'branch-12-mp1',
      url: 'https://192.0.2.10',
      files: [],
      acl: undefined,
      prune: false,
      allowDisconnect: false,
      interfaces: [
        {
          name: 'eth1',
          wireless: false,
          stanzas: [
            {
              name: 'eth1',
              family: 'inet',
              fields: { ...STATIC_DUAL_STACK_ETH1_INET, ...link },
              secrets: {},
            },
            {
              name: 'eth1',
              family: 'inet6',
              fields: {
                method: 'static',
                address: '2001:db8:20::20',
                // inet6 keeps the prefix length as the netmask (docs/device-model.md).
                netmask: '64',
                gateway: '2001:db8:20::1',
                dns_nameservers: ['2001:db8:20::53'],
                routes: [{ destination: '2001:db8:ff00::/40', gateway: '2001:db8:20::fe' }],
                ...link,
              },
              secrets: {},
            },
          ],
        },
      ],
    });
  });

  it('names PEAP with inner TLS files by content and puts both credential sets in their slots', async () => {
    const desired = await desiredFrom('peap-tls.yaml');
    const ca = nameOf('ca', 'certs/radius-ca.pem');
    const inner = {
      wpa_ca_cert2: nameOf('ca2', 'certs/radius-ca.pem'),
      wpa_client_cert2: nameOf('client2', 'certs/mp01-inner-cert.pem'),
      wpa_private_key2: nameOf('key2', 'certs/mp01-inner-key.pem'),
    };
    expect(desired.interfaces).toHaveLength(1);
    expect(desired.interfaces[0]?.stanzas).toEqual([
      {
        name: 'eth1',
        family: 'inet',
        fields: {
          method: 'dhcp',
          wpa_key_mgmt: 'IEEE8021X',
          wpa_eap: 'PEAP',
          wpa_identity: 'mp01@corp.example',
          wpa_phase1: 'peapver=0',
          wpa_phase2: 'auth=TLS',
          wpa_ca_cert: ca,
          ...inner,
        },
        secrets: {},
        // What a failure explanation needs, in the stick's words: the inner certificate is the one the port judges.
        dot1x: {
          eap: 'peap',
          inner: 'tls',
          wireless: false,
          identity: 'mp01@corp.example',
          caCert: 'certs/radius-ca.pem',
          innerCaCert: 'certs/radius-ca.pem',
          clientCert: {
            source: 'certs/mp01-inner-cert.pem',
            notBefore: certDate('validFrom'),
            notAfter: certDate('validTo'),
          },
          // Both sets' CA, judged at the device's clock as the client certificate is.
          otherCertificates: ['ca_cert', 'inner_tls.ca_cert'].map((key) => ({
            key,
            label: 'the CA certificate certs/radius-ca.pem',
            notBefore: '2026-11-22T12:41:04.000Z',
            notAfter: '2046-11-17T12:41:04.000Z',
          })),
          warnings: [
            {
              key: 'inner_tls.client_cert',
              message: 'certs/mp01-inner-cert.pem was not issued by the CA in inner_tls.ca_cert (certs/radius-ca.pem)',
            },
          ],
        },
      },
    ]);
    expect(desired.files.map((f) => [f.slot, f.filename, f.source])).toEqual([
      ['wpa_ca_cert', ca, 'certs/radius-ca.pem'],
      ['wpa_ca_cert2', inner.wpa_ca_cert2, 'certs/radius-ca.pem'],
      ['wpa_client_cert2', inner.wpa_client_cert2, 'certs/mp01-inner-cert.pem'],
      ['wpa_private_key2', inner.wpa_private_key2, 'certs/mp01-inner-key.pem'],
    ]);
    expect(desired.files[2]?.bytes.equals(readFileSync(join(profilesDir, 'certs/mp01-inner-cert.pem')))).toBe(true);
  });

  it('keeps a PFX as .p12 and its password as a Secret beside the fields, never in them', async () => {
    const desired = await desiredFrom('eap-tls-pfx.yaml');
    const stanza = desired.interfaces[0]?.stanzas[0];
    // The client certificate inside the PFX is found with the key's password, for its dates.
    expect(stanza?.dot1x?.clientCert).toEqual({
      source: 'certs/mp01.p12',
      notBefore: certDate('validFrom', 'certs/mp01-cert.pem'),
      notAfter: certDate('validTo', 'certs/mp01-cert.pem'),
    });
    expect(JSON.stringify(stanza?.dot1x)).not.toContain(
      readFileSync(join(profilesDir, 'secrets/mp01-pfx.pw'), 'utf8').trim(),
    );
    expect(stanza?.fields).toEqual({
      method: 'dhcp',
      wpa_key_mgmt: 'IEEE8021X',
      wpa_eap: 'TLS',
      wpa_identity: 'mp01@corp.example',
      wpa_ca_cert: nameOf('ca', 'certs/radius-ca.pem'),
      wpa_private_key: nameOf('key', 'certs/mp01.p12', 'p12'),
    });
    expect(Object.keys(stanza?.secrets ?? {})).toEqual(['wpa_private_key_passwd']);
    expect(stanza?.secrets.wpa_private_key_passwd).toBeInstanceOf(Secret);
    expect(stanza?.secrets.wpa_private_key_passwd?.reveal()).toBe(
      readFileSync(join(profilesDir, 'secrets/mp01-pfx.pw'), 'utf8').trim(),
    );
  });

  it('makes wireless enterprise WPA-EAP with the security spelled as the device wants it', async () => {
    const desired = await desiredFrom('wireless-wpa2-enterprise.yaml');
    expect(desired.interfaces[0]?.wireless).toBe(true);
    const stanza = desired.interfaces[0]?.stanzas[0];
    expect(stanza?.fields).toEqual({
      method: 'dhcp',
      ssid: 'CorpSecure',
      security: 'wpa2_enterprise',
      wpa_key_mgmt: 'WPA-EAP',
      wpa_eap: 'PEAP',
      wpa_identity: 'mp01@corp.example',
      wpa_phase1: 'peapver=0',
      wpa_phase2: 'auth=MSCHAPV2',
      wpa_ca_cert: nameOf('ca', 'certs/radius-ca.pem'),
    });
    expect(stanza?.secrets.wpa_password?.reveal()).toBe('example-peap-password');
  });

  it('carries a wireless passphrase as a Secret only', async () => {
    const desired = await desiredFrom('wireless-wpa2-personal.yaml');
    const stanza = desired.interfaces[0]?.stanzas[0];
    expect(stanza?.fields).toEqual({ method: 'dhcp', ssid: 'CorpWiFi', security: 'wpa2_personal' });
    expect(stanza?.secrets.passphrase?.reveal()).toBe('example-wifi-passphrase');
  });

  it('gives a VLAN its parent in vlan_raw_device and in vlanParent', async () => {
    const desired = await desiredFrom('vlan-dot1x.yaml');
    expect(desired.interfaces.map((i) => [i.name, i.vlanParent])).toEqual([
      ['eth1', undefined],
      ['eth1.100', 'eth1'],
    ]);
    expect(desired.interfaces[1]?.stanzas[0]?.fields).toMatchObject({
      vlan_raw_device: 'eth1',
      method: 'static',
      address: '203.0.113.20',
      netmask: '255.255.255.0',
      gateway: '203.0.113.1',
      wpa_identity: 'mp01-vlan100@corp.example',
    });
  });

  it('maps ACL ports to from_port and to_port, every rule a permit', async () => {
    const desired = await desiredFrom('acl.yaml');
    expect(desired.acl).toEqual([
      {
        action: 'permit',
        protocol: 'tcp',
        from_port: 443,
        to_port: 443,
        source_addresses: ['10.0.0.0/8'],
        interfaces: ['eth0'],
      },
      {
        action: 'permit',
        protocol: 'tcp',
        from_port: 8443,
        to_port: 8443,
        source_addresses: ['10.0.0.0/8', '2001:db8::/32'],
        interfaces: ['eth0', 'eth1'],
      },
      {
        action: 'permit',
        protocol: 'udp',
        from_port: 5000,
        to_port: 5100,
        source_addresses: ['0.0.0.0/0'],
        interfaces: ['eth1'],
      },
    ]);
    expect(desired.interfaces).toEqual([]);
  });
});
