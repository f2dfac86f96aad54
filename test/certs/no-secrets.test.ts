import { beforeAll, describe, expect, it } from 'vitest';
import { checkCredentialSet, isReadError, readPrivateKey } from '../../src/certs/index.js';
import { credentialSet } from './credential-sets.js';
import { usePki } from '../support/test-pki.js';

/** Every password these tests use, right or wrong: none may appear in what a technician reads. */
const RIGHT = 'Right-Pa55word-7a1f';
const WRONG = ['Wrong-Pa55word-93c2', 'x', 'test', 'mp01', 'certs'];

const pki = usePki();
beforeAll(() => {
  const ca = pki.ca('ca', 'Test CA', { algorithm: 'p256' });
  const pair = pki.issue('client', 'client', ca, 'client');
  const other = pki.issue('other', 'other', ca, 'client', { algorithm: 'p256' });
  pki.openssl([
    'pkcs12',
    '-export',
    '-in',
    pair.cert,
    '-inkey',
    pair.key,
    '-passout',
    `pass:${RIGHT}`,
    '-out',
    pki.path('client.p12'),
  ]);
  pki.openssl([
    'pkcs12',
    '-export',
    '-legacy',
    '-in',
    pair.cert,
    '-inkey',
    pair.key,
    '-passout',
    `pass:${RIGHT}`,
    '-out',
    pki.path('legacy.p12'),
  ]);
  pki.openssl([
    'pkcs8',
    '-topk8',
    '-v2',
    'aes-256-cbc',
    '-in',
    pair.key,
    '-passout',
    `pass:${RIGHT}`,
    '-out',
    pki.path('enc.key'),
  ]);
  pki.openssl([
    'pkey',
    '-in',
    other.key,
    '-traditional',
    '-des3',
    '-passout',
    `pass:${RIGHT}`,
    '-out',
    pki.path('trad.key'),
  ]);
});

describe('secrets never reach problems or read errors', () => {
  it('keeps every password out of messages, hints and details', () => {
    const texts: string[] = [];
    for (const key of ['client.p12', 'legacy.p12', 'enc.key', 'trad.key', 'client.key']) {
      for (const password of [RIGHT, ...WRONG]) {
        // client_cert other.pem mismatches client's key, so the right password still yields problems.
        for (const cert of [undefined, 'other.pem']) {
          const result = checkCredentialSet(credentialSet(pki, { ca: 'ca.pem', cert, key, password }), {
            now: pki.reference,
          });
          texts.push(...result.problems.flatMap((p) => [p.message, p.hint ?? '']));
        }
        const read = readPrivateKey(pki.read(key), password);
        if (isReadError(read)) texts.push(read.detail);
      }
    }
    // The scenarios did produce problems: wrong passwords, mismatches, an ignored password.
    expect(texts.some((t) => t.includes('is the wrong password for'))).toBe(true);
    expect(texts.some((t) => t.includes('does not match the client certificate'))).toBe(true);
    expect(texts.some((t) => t.includes('is ignored'))).toBe(true);
    // 'x', 'test', 'mp01' and 'certs' occur in ordinary words and file names; only check the long ones.
    for (const secret of [RIGHT, WRONG[0] ?? '']) {
      expect(texts.filter((t) => t.includes(secret))).toEqual([]);
    }
  });
});
