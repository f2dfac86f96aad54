import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRealDot1xBackend,
  loadAuthenticatorProfile,
  modelDot1xBackend,
  type AuthenticatorProfile,
  type Dot1xFiles,
  type RealDot1xBackend,
} from '../../src/simulator/index.js';
import type { Stanza } from '../../src/simulator/stanza.js';
import { KEY_PASSWORD, PFX_PASSWORD, useLabPki } from '../support/lab-pki.js';
import { assertRealBackendCanRun, leftoversOf, NOTHING_LEFT } from './real-lab.js';

/**
 * The model and the real backend side by side on the same stanza, files and port profile, one
 * authentication each, for every case of the hostapd/wpa_supplicant lab and the edges around it
 * (keys that do not open or do not match, certificates not yet valid, methods a user may not use).
 * The matrix through mpprov apply (matrix.test.ts) covers what a stick can say; this covers what a
 * device may hold, including what stick validation would refuse.
 */

const BASE = { name: 'eth1', family: 'inet', method: 'dhcp', wpa_key_mgmt: 'IEEE8021X' } as const;
const PEAP: Stanza = {
  ...BASE,
  wpa_eap: 'PEAP',
  wpa_identity: 'alice',
  wpa_anonymous_identity: 'anonymous',
  wpa_password: 'alicepass',
  wpa_phase1: 'peapver=0',
  wpa_phase2: 'auth=MSCHAPV2',
  wpa_ca_cert: 'ca.pem',
};
const TLS: Stanza = {
  ...BASE,
  wpa_eap: 'TLS',
  wpa_identity: 'client.lab.test',
  wpa_ca_cert: 'ca.pem',
  wpa_client_cert: 'client.pem',
  wpa_private_key: 'client.key',
};
const PEAP_TLS: Stanza = {
  ...BASE,
  wpa_eap: 'PEAP',
  wpa_identity: 'client.lab.test',
  wpa_anonymous_identity: 'anonymous',
  wpa_phase2: 'auth=TLS',
  wpa_ca_cert: 'ca.pem',
  wpa_ca_cert2: 'ca.pem',
  wpa_client_cert2: 'client.pem',
  wpa_private_key2: 'client.key',
};
const MD5: Stanza = { ...BASE, wpa_eap: 'MD5', wpa_identity: 'md5user', wpa_password: 'md5secret' };
const without = (s: Stanza, ...fields: (keyof Stanza)[]): Stanza =>
  Object.fromEntries(Object.entries(s).filter(([k]) => !fields.includes(k as keyof Stanza))) as Stanza;

type Port = 'full' | 'peap-only';
const CASES: [string, Stanza, boolean, Port?][] = [
  ['PEAP-MSCHAPv2', PEAP, true],
  ['PEAP-MSCHAPv2 without a CA (no server check)', without(PEAP, 'wpa_ca_cert'), true],
  ['PEAP-MSCHAPv2 without an anonymous identity', without(PEAP, 'wpa_anonymous_identity'), true],
  ['EAP-TLS, PEM key', TLS, true],
  ['EAP-TLS, DER key', { ...TLS, wpa_private_key: 'client.key.der' }, true],
  [
    'EAP-TLS, encrypted PEM key and its password',
    { ...TLS, wpa_private_key: 'client-encrypted.key', wpa_private_key_passwd: KEY_PASSWORD },
    true,
  ],
  [
    'EAP-TLS, PFX',
    { ...without(TLS, 'wpa_client_cert'), wpa_private_key: 'client.pfx', wpa_private_key_passwd: PFX_PASSWORD },
    true,
  ],
  [
    'EAP-TLS, legacy PFX',
    { ...without(TLS, 'wpa_client_cert'), wpa_private_key: 'client-legacy.pfx', wpa_private_key_passwd: PFX_PASSWORD },
    true,
  ],
  ['EAP-TLS, DER CA certificate', { ...TLS, wpa_ca_cert: 'ca.der' }, true],
  [
    'EAP-TLS, anonymous outer identity the server knows',
    { ...TLS, wpa_identity: 'someone.else', wpa_anonymous_identity: 'client.lab.test' },
    true,
  ],
  ['PEAP with inner EAP-TLS', PEAP_TLS, true],
  [
    'PEAP with inner EAP-TLS from a PFX',
    { ...without(PEAP_TLS, 'wpa_client_cert2'), wpa_private_key2: 'client.pfx', wpa_private_key2_passwd: PFX_PASSWORD },
    true,
  ],
  [
    'PEAP with inner EAP-TLS, outer identity with a TLS line (NAK to PEAP)',
    without(PEAP_TLS, 'wpa_anonymous_identity'),
    true,
  ],
  ['EAP-MD5', MD5, true],

  ['wrong PEAP password', { ...PEAP, wpa_password: 'WRONGpass' }, false],
  ['wrong MD5 password', { ...MD5, wpa_password: 'WRONGsecret' }, false],
  ['unknown identity', { ...MD5, wpa_identity: 'mallory' }, false],
  ['a method the user may not use', { ...MD5, wpa_identity: 'alice', wpa_password: 'alicepass' }, false],
  ['unknown inner identity', { ...PEAP, wpa_identity: 'mallory' }, false],
  [
    'client certificate from another CA',
    { ...TLS, wpa_client_cert: 'rogue-client.pem', wpa_private_key: 'rogue-client.key' },
    false,
  ],
  [
    'inner client certificate from another CA',
    { ...PEAP_TLS, wpa_client_cert2: 'rogue-client.pem', wpa_private_key2: 'rogue-client.key' },
    false,
  ],
  [
    'expired client certificate',
    { ...TLS, wpa_client_cert: 'expired-client.pem', wpa_private_key: 'expired-client.key' },
    false,
  ],
  [
    'client certificate not valid yet',
    { ...TLS, wpa_client_cert: 'future-client.pem', wpa_private_key: 'future-client.key' },
    false,
  ],
  ['a key that does not match the certificate', { ...TLS, wpa_private_key: 'other.key' }, false],
  [
    'a PFX with a wrong password',
    { ...without(TLS, 'wpa_client_cert'), wpa_private_key: 'client.pfx', wpa_private_key_passwd: 'wrong' },
    false,
  ],
  ['a PFX without its password', { ...without(TLS, 'wpa_client_cert'), wpa_private_key: 'client.pfx' }, false],
  ['an encrypted key without its password', { ...TLS, wpa_private_key: 'client-encrypted.key' }, false],
  ["a server certificate the stanza's CA did not issue (EAP-TLS)", { ...TLS, wpa_ca_cert: 'rogue-ca.pem' }, false],
  ["a server certificate the stanza's CA did not issue (PEAP)", { ...PEAP, wpa_ca_cert: 'rogue-ca.pem' }, false],
  ['an inner server certificate the second CA did not issue', { ...PEAP_TLS, wpa_ca_cert2: 'rogue-ca.pem' }, false],
  [
    'EAP-TLS with an anonymous outer identity the server does not know',
    { ...TLS, wpa_anonymous_identity: 'anonymous' },
    false,
  ],
  ['EAP-TLS on a port that offers only PEAP', TLS, false, 'peap-only'],
  ['EAP-MD5 on a port that offers only PEAP', MD5, false, 'peap-only'],
];

const pki = useLabPki();
const profiles = new Map<Port, AuthenticatorProfile>();
let files: Dot1xFiles;
let real: RealDot1xBackend | undefined;
const contents = new Map<string, Uint8Array>();

beforeAll(async () => {
  profiles.set('full', await loadAuthenticatorProfile(pki.path('port.yaml')));
  profiles.set('peap-only', await loadAuthenticatorProfile(pki.path('peap-only.yaml')));
  const names = new Set(
    CASES.flatMap(([, s]) =>
      ['wpa_ca_cert', 'wpa_client_cert', 'wpa_private_key', 'wpa_ca_cert2', 'wpa_client_cert2', 'wpa_private_key2'].map(
        (f) => s[f as keyof Stanza],
      ),
    ),
  );
  for (const name of names) if (typeof name === 'string') contents.set(name, new Uint8Array(pki.read(name)));
  // Every slot by the PKI file's own name, as the simulator's model test uploads them.
  files = { get: (_slot, name) => contents.get(name) };
});

afterAll(async () => {
  await real?.close();
});

describe('the model and the real backend, one authentication each', () => {
  it.each(CASES)(
    '%s',
    async (_name, stanza, expected, port = 'full') => {
      assertRealBackendCanRun();
      real ??= await createRealDot1xBackend();
      const profile = profiles.get(port)!;
      const [model, wire] = [
        await modelDot1xBackend.authenticate(profile, stanza, files),
        await real.authenticate(profile, stanza, files),
      ];
      expect(
        { model: model.authorized, real: wire.authorized },
        `model: ${model.reason}\nreal: ${wire.reason}`,
      ).toEqual({ model: expected, real: expected });
    },
    30_000,
  );

  it('leave no namespace, veth, daemon or folder of this process behind', async () => {
    await real?.close();
    real = undefined;
    expect(leftoversOf(process.pid)).toEqual(NOTHING_LEFT);
  });
});
