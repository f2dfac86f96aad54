import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAuthenticatorProfile } from '../../src/simulator/index.js';

/** The switch port's authenticator profile: YAML, paths relative to the file. */

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mpprov-sim-profile-'));
  await writeFile(join(dir, 'ca.pem'), 'CA');
  await writeFile(join(dir, 'server.pem'), 'SERVER');
  await writeFile(join(dir, 'server.key'), 'KEY');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function profile(text: string) {
  const file = join(dir, 'port.yaml');
  await writeFile(file, text);
  return loadAuthenticatorProfile(file);
}

describe('loadAuthenticatorProfile', () => {
  it('reads methods, users and the PEM files relative to the profile', async () => {
    const p = await profile(`eap_methods: [peap, md5]
client_ca: ca.pem
server_cert: server.pem
server_key: server.key
users:
  - { identity: alice, password: alicepass, methods: [peap-mschapv2] }
`);
    expect(p.eapMethods).toEqual(['peap', 'md5']);
    expect(p.serverCert).toEqual({ path: join(dir, 'server.pem'), pem: 'SERVER' });
    expect(p.clientCa?.path).toBe(join(dir, 'ca.pem'));
    expect(p.users).toEqual([{ identity: 'alice', password: 'alicepass', methods: ['peap-mschapv2'] }]);
  });

  it('needs no certificates for MD5 alone', async () => {
    const p = await profile('eap_methods: [md5]\nusers:\n  - { identity: u, password: p, methods: [md5] }\n');
    expect(p.serverCert).toBeUndefined();
  });

  it.each([
    ['an unknown method', 'eap_methods: [ttls]\nusers: []\n', 'Field "eap_methods[0]" must be "peap", "tls" or "md5".'],
    [
      'a TLS-based method without a server certificate',
      'eap_methods: [peap]\nusers: []\n',
      'Fields "server_cert" and "server_key" are required when eap_methods has peap or tls.',
    ],
    [
      'a password-based user without a password',
      'eap_methods: [md5]\nusers:\n  - { identity: u, methods: [md5] }\n',
      'Field "users[0].password" is required for method "md5".',
    ],
    [
      'a certificate user without client_ca',
      'eap_methods: [tls]\nserver_cert: server.pem\nserver_key: server.key\nusers:\n  - { identity: u, methods: [tls] }\n',
      'Field "client_ca" is required: users[0] may use certificates.',
    ],
    [
      'an unknown user method',
      'eap_methods: [peap]\nserver_cert: server.pem\nserver_key: server.key\nusers:\n  - { identity: u, methods: [peap] }\n',
      'Field "users[0].methods[0]" must be "peap-mschapv2", "peap-tls", "tls" or "md5".',
    ],
  ])('refuses %s', async (_label, text, message) => {
    await expect(profile(text)).rejects.toThrow(`Authenticator profile ${join(dir, 'port.yaml')}: ${message}`);
  });

  it('refuses a profile whose files cannot be read', async () => {
    await expect(
      profile('eap_methods: [peap]\nserver_cert: missing.pem\nserver_key: server.key\nusers: []\n'),
    ).rejects.toThrow(
      `Authenticator profile ${join(dir, 'port.yaml')}: cannot read "server_cert" file ${join(dir, 'missing.pem')}.`,
    );
  });
});
