import { beforeAll } from 'vitest';
import { TestPki, usePki, type CertOptions } from './test-pki.js';

/**
 * The 802.1X lab's files, the kinds a real hostapd/wpa_supplicant run needs (docs/simulator.md,
 * "The real backend"): a CA and a rogue CA, the RADIUS server's certificate, client
 * certificates (good, from the rogue CA, expired, not yet valid) and the client key as PEM,
 * encrypted PEM, DER, PFX and legacy PFX; and the lab switch port's authenticator profile
 * (port.yaml, and peap-only.yaml offering PEAP alone). EC keys keep it fast. Subjects are a bare
 * CN: the simulator's sentences quote them ("its certificate (CN=radius.lab.test) ...").
 */
export const PFX_PASSWORD = 'pfxpass';
export const KEY_PASSWORD = 'keypass';

/** The RADIUS server of the lab switch: its users, and the lab's CA and server certificate. */
const PORT_PROFILE = `eap_methods: [peap, tls, md5]
client_ca: ca.pem
server_cert: server.pem
server_key: server.key
server_id: radius.lab.test
users:
  - { identity: alice, password: alicepass, methods: [peap-mschapv2] }
  - { identity: md5user, password: md5secret, methods: [md5] }
  - { identity: client.lab.test, methods: [tls, peap-tls] }
`;

const lab = (cn: string, extra: CertOptions = {}): CertOptions => ({
  algorithm: 'p256',
  subject: `/CN=${cn}`,
  ...extra,
});

/** Adds the lab's files to `pki`, each under the name the tests use (ca.pem, client.key, client.pfx, port.yaml, ...). */
export function addLabFiles(pki: TestPki): void {
  const ca = pki.ca('ca', 'Lab Root CA', lab('Lab Root CA'));
  const rogue = pki.ca('rogue-ca', 'Rogue CA', lab('Rogue CA'));
  pki.issue('server', 'radius.lab.test', ca, 'server', lab('radius.lab.test', { san: 'DNS:radius.lab.test' }));
  pki.issue('client', 'client.lab.test', ca, 'client', lab('client.lab.test'));
  pki.issue('rogue-client', 'client.lab.test', rogue, 'client', lab('client.lab.test'));
  // Fixed dates: the simulator's sentences name them ("valid to Jan  1 00:00:00 2021 GMT").
  pki.issue(
    'expired-client',
    'client.lab.test',
    ca,
    'client',
    lab('client.lab.test', { validFrom: new Date('2020-01-01T00:00:00Z'), validTo: new Date('2021-01-01T00:00:00Z') }),
  );
  pki.issue(
    'future-client',
    'client.lab.test',
    ca,
    'client',
    lab('client.lab.test', { validFrom: new Date('2099-01-01T00:00:00Z'), validTo: new Date('2099-12-31T00:00:00Z') }),
  );
  pki.openssl(['pkey', '-in', 'client.key', '-outform', 'DER', '-out', 'client.key.der']);
  pki.openssl([
    'pkey',
    '-in',
    'client.key',
    '-aes256',
    '-passout',
    `pass:${KEY_PASSWORD}`,
    '-out',
    'client-encrypted.key',
  ]);
  pki.openssl([
    'pkcs12',
    '-export',
    '-in',
    'client.pem',
    '-inkey',
    'client.key',
    '-certfile',
    'ca.pem',
    '-passout',
    `pass:${PFX_PASSWORD}`,
    '-out',
    'client.pfx',
  ]);
  pki.openssl([
    'pkcs12',
    '-export',
    '-legacy',
    '-in',
    'client.pem',
    '-inkey',
    'client.key',
    '-certfile',
    'ca.pem',
    '-passout',
    `pass:${PFX_PASSWORD}`,
    '-out',
    'client-legacy.pfx',
  ]);
  pki.key('other.key', 'p256');
  pki.openssl(['x509', '-in', 'ca.pem', '-outform', 'DER', '-out', 'ca.der']);
  pki.write('port.yaml', PORT_PROFILE);
  pki.write('peap-only.yaml', PORT_PROFILE.replace('eap_methods: [peap, tls, md5]', 'eap_methods: [peap]'));
}

/** A lab PKI of its own; the caller disposes of it. */
export function createLabPki(): TestPki {
  const pki = new TestPki();
  addLabFiles(pki);
  return pki;
}

/** The lab PKI for the tests of one file (or describe block): made before them, removed after them. */
export function useLabPki(): TestPki {
  const pki = usePki();
  beforeAll(() => addLabFiles(pki));
  return pki;
}
