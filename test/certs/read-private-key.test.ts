import { X509Certificate, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ReadFailure, isReadError, readPrivateKey } from '../../src/certs/index.js';
import { readError } from '../../src/certs/read-error.js';
import { retryAsUtf8 } from '../../src/certs/read-pfx.js';
import { type Issued, usePki } from '../support/test-pki.js';

const PASSWORD = 'correct horse battery';

const pki = usePki();
let rsa: Issued;
let ec: Issued;
let caCert: X509Certificate;

beforeAll(() => {
  const ca = pki.ca('ca', 'Test CA', { algorithm: 'p256' });
  caCert = new X509Certificate(pki.read('ca.pem'));
  rsa = pki.issue('rsa', 'rsa client', ca, 'client');
  ec = pki.issue('ec', 'ec client', ca, 'client', { algorithm: 'p256' });
});

/** Reads `file` and asserts it gives the key of `pair`'s certificate. */
function expectKeyOf(pair: Issued, file: string, password?: string): void {
  const read = readPrivateKey(pki.read(file), password);
  if (isReadError(read)) throw new Error(`${file}: ${read.error}: ${read.detail}`);
  const certKey = new X509Certificate(readFileSync(pair.cert)).publicKey;
  expect(createPublicKey(read.key).export({ type: 'spki', format: 'der' })).toEqual(
    certKey.export({ type: 'spki', format: 'der' }),
  );
}

function expectFailure(file: string, password: string | undefined, error: string): void {
  const read = readPrivateKey(pki.read(file), password);
  expect(isReadError(read) ? read.error : 'read').toBe(error);
}

describe('readPrivateKey: PEM and DER', () => {
  it('reads PKCS#8 PEM, PKCS#1 PEM and SEC1 PEM', () => {
    pki.openssl(['pkey', '-in', rsa.key, '-traditional', '-out', pki.path('rsa-pkcs1.pem')]);
    pki.openssl(['pkey', '-in', ec.key, '-traditional', '-out', pki.path('ec-sec1.pem')]);
    expectKeyOf(rsa, 'rsa.key');
    expectKeyOf(rsa, 'rsa-pkcs1.pem');
    expectKeyOf(ec, 'ec.key');
    expectKeyOf(ec, 'ec-sec1.pem');
  });

  it('reads a SEC1 key that `openssl ecparam -genkey` wrote after an EC PARAMETERS block', () => {
    pki.openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-out', pki.path('ecparam.pem')]);
    const read = readPrivateKey(pki.read('ecparam.pem'));
    expect(isReadError(read) ? read.error : read.key.asymmetricKeyType).toBe('ec');
  });

  it('reads PKCS#8, PKCS#1 and SEC1 DER', () => {
    pki.openssl(['pkcs8', '-topk8', '-nocrypt', '-in', rsa.key, '-outform', 'DER', '-out', pki.path('rsa-pkcs8.der')]);
    pki.openssl(['pkey', '-in', rsa.key, '-outform', 'DER', '-out', pki.path('rsa-pkcs1.der')]);
    pki.openssl(['pkey', '-in', ec.key, '-outform', 'DER', '-out', pki.path('ec-sec1.der')]);
    expectKeyOf(rsa, 'rsa-pkcs8.der');
    expectKeyOf(rsa, 'rsa-pkcs1.der');
    expectKeyOf(ec, 'ec-sec1.der');
  });

  it('reads encrypted PKCS#8 PEM and DER with the password, and tells a missing from a wrong one', () => {
    pki.openssl([
      'pkcs8',
      '-topk8',
      '-v2',
      'aes-256-cbc',
      '-in',
      rsa.key,
      '-passout',
      `pass:${PASSWORD}`,
      '-out',
      pki.path('rsa-enc.pem'),
    ]);
    pki.openssl([
      'pkcs8',
      '-topk8',
      '-v2',
      'aes-256-cbc',
      '-in',
      ec.key,
      '-passout',
      `pass:${PASSWORD}`,
      '-outform',
      'DER',
      '-out',
      pki.path('ec-enc.der'),
    ]);
    expectKeyOf(rsa, 'rsa-enc.pem', PASSWORD);
    expectKeyOf(ec, 'ec-enc.der', PASSWORD);
    expectFailure('rsa-enc.pem', undefined, ReadFailure.NeedsPassword);
    expectFailure('ec-enc.der', undefined, ReadFailure.NeedsPassword);
    expectFailure('rsa-enc.pem', 'not it', ReadFailure.WrongPassword);
    expectFailure('ec-enc.der', 'not it', ReadFailure.WrongPassword);
    const read = readPrivateKey(pki.read('rsa-enc.pem'), PASSWORD);
    expect(!isReadError(read) && read.encrypted).toBe(true);
  });

  it('reads traditional Proc-Type encrypted PEM (RSA 3DES, EC AES) and tells a wrong password', () => {
    pki.openssl([
      'pkey',
      '-in',
      rsa.key,
      '-traditional',
      '-des3',
      '-passout',
      `pass:${PASSWORD}`,
      '-out',
      pki.path('rsa-trad.pem'),
    ]);
    pki.openssl([
      'pkey',
      '-in',
      ec.key,
      '-traditional',
      '-aes-256-cbc',
      '-passout',
      `pass:${PASSWORD}`,
      '-out',
      pki.path('ec-trad.pem'),
    ]);
    expectKeyOf(rsa, 'rsa-trad.pem', PASSWORD);
    expectKeyOf(ec, 'ec-trad.pem', PASSWORD);
    expectFailure('rsa-trad.pem', undefined, ReadFailure.NeedsPassword);
    // Many wrong passwords: about 1 in 256 decrypts to valid padding, which must still read as wrong.
    for (let i = 0; i < 300; i++) expectFailure('ec-trad.pem', `wrong-${i}`, ReadFailure.WrongPassword);
  });

  it('reads PKCS#8 with legacy PBES1 encryption that OpenSSL 3 refuses without its legacy provider', () => {
    pki.openssl([
      // -iter 1 only keeps the many-passwords loop below fast; forge's KDF runs in JavaScript.
      'pkcs8',
      '-topk8',
      '-v1',
      'PBE-SHA1-RC2-40',
      '-iter',
      '1',
      '-provider',
      'legacy',
      '-provider',
      'default',
      '-in',
      ec.key,
      '-passout',
      `pass:${PASSWORD}`,
      '-out',
      pki.path('ec-rc2.pem'),
    ]);
    pki.openssl([
      'pkcs8',
      '-topk8',
      '-v1',
      'PBE-SHA1-3DES',
      '-iter',
      '1',
      '-in',
      rsa.key,
      '-passout',
      `pass:${PASSWORD}`,
      '-out',
      pki.path('rsa-3des.pem'),
    ]);
    expectKeyOf(ec, 'ec-rc2.pem', PASSWORD);
    expectKeyOf(rsa, 'rsa-3des.pem', PASSWORD);
    // As above, wrong passwords that decrypt to valid padding must still read as wrong.
    for (let i = 0; i < 150; i++) {
      expectFailure('ec-rc2.pem', `wrong-${i}`, ReadFailure.WrongPassword);
      expectFailure('rsa-3des.pem', `wrong-${i}`, ReadFailure.WrongPassword);
    }
  });

  it('ignores a password given for an unencrypted key', () => {
    expectKeyOf(rsa, 'rsa.key', 'unused');
    const read = readPrivateKey(pki.read('rsa.key'), 'unused');
    expect(!isReadError(read) && read.encrypted).toBe(false);
  });

  it('refuses what is not a private key without throwing', () => {
    pki.write('garbage.pem', 'hello, world\n');
    pki.write('empty.pem', '');
    expectFailure('rsa.pem', undefined, ReadFailure.Unreadable);
    expectFailure('garbage.pem', undefined, ReadFailure.Unreadable);
    expectFailure('empty.pem', undefined, ReadFailure.Unreadable);
    const broken = Buffer.from(pki.read('rsa.key'))
      .toString()
      .replace(/\n[A-Za-z0-9+/]{20}/, '\n!!!!');
    pki.write('broken.pem', broken);
    expectFailure('broken.pem', undefined, ReadFailure.Unreadable);
  });
});

describe('readPrivateKey: PFX', () => {
  beforeAll(() => {
    const pfx = (out: string, pair: Issued, extra: string[]): void => {
      pki.openssl([
        'pkcs12',
        '-export',
        '-in',
        pair.cert,
        '-inkey',
        pair.key,
        '-certfile',
        pki.path('ca.pem'),
        ...extra,
        '-out',
        pki.path(out),
      ]);
    };
    pfx('rsa.p12', rsa, ['-passout', `pass:${PASSWORD}`]);
    pfx('rsa-legacy.p12', rsa, ['-legacy', '-passout', `pass:${PASSWORD}`]);
    pfx('ec.p12', ec, ['-passout', `pass:${PASSWORD}`]);
    pfx('ec-legacy.p12', ec, ['-legacy', '-passout', `pass:${PASSWORD}`]);
    pfx('rsa-empty.p12', rsa, ['-passout', 'pass:']);
    pfx('rsa-nomac.p12', rsa, ['-nomac', '-iter', '1', '-passout', `pass:${PASSWORD}`]);
  });

  it.each(['rsa.p12', 'rsa-legacy.p12', 'rsa-nomac.p12'])('reads RSA %s with its certificates', (file) => {
    expectKeyOf(rsa, file, PASSWORD);
    const read = readPrivateKey(pki.read(file), PASSWORD);
    if (isReadError(read)) throw new Error(read.detail);
    // The certificates come out byte for byte: forge's RSA objects are re-encoded, not rebuilt.
    const fingerprints = read.certificates.map((c) => c.fingerprint256).sort();
    const expected = [new X509Certificate(pki.read('rsa.pem')).fingerprint256, caCert.fingerprint256].sort();
    expect(fingerprints).toEqual(expected);
    expect(read.encrypted).toBe(true);
  });

  it.each(['ec.p12', 'ec-legacy.p12'])('reads EC %s, which forge alone cannot', (file) => {
    expectKeyOf(ec, file, PASSWORD);
    const read = readPrivateKey(pki.read(file), PASSWORD);
    if (isReadError(read)) throw new Error(read.detail);
    expect(read.key.asymmetricKeyType).toBe('ec');
    expect(read.certificates.map((c) => c.fingerprint256)).toContain(
      new X509Certificate(pki.read('ec.pem')).fingerprint256,
    );
  });

  it('opens a PFX made with an empty password when no password is given', () => {
    expectKeyOf(rsa, 'rsa-empty.p12');
  });

  it('tells a missing password from a wrong one, for AES, legacy and MAC-less PFX', () => {
    for (const file of ['rsa.p12', 'rsa-legacy.p12', 'ec.p12', 'rsa-nomac.p12']) {
      expectFailure(file, undefined, ReadFailure.NeedsPassword);
      expectFailure(file, 'not it', ReadFailure.WrongPassword);
    }
    // Without a MAC, only the decryption notices: try enough passwords to meet lucky padding.
    for (let i = 0; i < 150; i++) expectFailure('rsa-nomac.p12', `wrong-${i}`, ReadFailure.WrongPassword);
  });

  it('opens AES and legacy PFX and encrypted PEM keys whose password is not ASCII', () => {
    const umlauts = 'Pässwörd-ÆØÅ-€';
    pki.openssl([
      'pkcs12',
      '-export',
      '-in',
      rsa.cert,
      '-inkey',
      rsa.key,
      '-passout',
      `pass:${umlauts}`,
      '-out',
      pki.path('utf8.p12'),
    ]);
    pki.openssl([
      'pkcs12',
      '-export',
      '-legacy',
      '-in',
      ec.cert,
      '-inkey',
      ec.key,
      '-passout',
      `pass:${umlauts}`,
      '-out',
      pki.path('utf8-legacy.p12'),
    ]);
    pki.openssl([
      'pkcs8',
      '-topk8',
      '-v2',
      'aes-256-cbc',
      '-in',
      ec.key,
      '-passout',
      `pass:${umlauts}`,
      '-out',
      pki.path('utf8.pem'),
    ]);
    pki.openssl([
      'pkey',
      '-in',
      rsa.key,
      '-traditional',
      '-aes-128-cbc',
      '-passout',
      `pass:${umlauts}`,
      '-out',
      pki.path('utf8-trad.pem'),
    ]);
    expectKeyOf(rsa, 'utf8.p12', umlauts);
    expectKeyOf(ec, 'utf8-legacy.p12', umlauts);
    expectKeyOf(ec, 'utf8.pem', umlauts);
    expectKeyOf(rsa, 'utf8-trad.pem', umlauts);
    expectFailure('utf8.p12', 'Passwort-ÄÖÜ', ReadFailure.WrongPassword);
  });

  it('reports a PFX without a key, and a damaged one, without throwing', () => {
    pki.openssl([
      'pkcs12',
      '-export',
      '-nokeys',
      '-in',
      rsa.cert,
      '-passout',
      `pass:${PASSWORD}`,
      '-out',
      pki.path('nokey.p12'),
    ]);
    expectFailure('nokey.p12', PASSWORD, ReadFailure.NoKey);
    const whole = pki.read('rsa.p12');
    const damaged = Buffer.from(whole);
    damaged.fill(0x41, 200, 260);
    // The damage lands in the encrypted contents, so the MAC fails: with a MAC, a damaged file and
    // a wrong password look the same, and the right password is what the technician checks first.
    const read = readPrivateKey(damaged, PASSWORD);
    expect(isReadError(read) ? read.error : 'read').toBe(ReadFailure.WrongPassword);
    const header = Buffer.from(whole);
    header.fill(0x41, 0, 24);
    expect(readPrivateKey(header, PASSWORD)).toMatchObject({ error: ReadFailure.Unreadable });
  });
});

describe('a non-ASCII PFX password', () => {
  // The first try hands forge the password as it is: right for the MAC (UTF-16), wrong for PBES2
  // (UTF-8). The wrong key's garbage usually fails the padding check, but 1 time in 256 it passes
  // and then fails as ASN.1 (this is what a CI run met: "Only 8, 16, 24, or 32 bits supported"):
  // either way the MAC verified, so the UTF-8 retry must follow. Which failure the garbage gives
  // is chance, so the decision is checked here; the whole read is the test above.
  it('is retried as UTF-8 whenever the MAC verified, whatever the garbage of the wrong key failed as', () => {
    const password = 'Pässwörd-€';
    const garbage = readError(ReadFailure.Unreadable, 'Only 8, 16, 24, or 32 bits supported: 96');
    expect(retryAsUtf8(password, garbage)).toBe(true);
    expect(retryAsUtf8(password, readError(ReadFailure.WrongPassword, 'Failed to decrypt'))).toBe(true);
    // The MAC refused it: the password itself is wrong, in any encoding.
    const macFailed = readError(ReadFailure.WrongPassword, 'PKCS#12 MAC could not be verified. Invalid password?');
    expect(retryAsUtf8(password, macFailed)).toBe(false);
    // ASCII is the same bytes either way; a PFX without a key stays one.
    expect(retryAsUtf8('Password', garbage)).toBe(false);
    expect(retryAsUtf8(password, readError(ReadFailure.NoKey, 'the PFX holds no private key'))).toBe(false);
  });
});
