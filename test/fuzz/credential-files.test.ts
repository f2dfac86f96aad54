import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  checkTrustAnchor,
  derTruncation,
  detectCredentialKind,
  readCertificates,
  readPrivateKey,
  validateStick,
} from '../../src/certs/index.js';
import { hasErrors } from '../../src/config/index.js';
import { stickWithConfig } from '../support/stick-workspace.js';
import { usePki } from '../support/test-pki.js';
import { expectLocated, expectNoSecret, printedProblems } from './located-problems.js';
import {
  type ByteMutation,
  byteMutation,
  applyByteMutation,
  FUZZ_TIMEOUT_MS,
  fuzzParameters,
  fuzzRuns,
  traceInput,
  withinBound,
} from './mutations.js';

/**
 * Certificate and key files (PEM, DER, encrypted, PFX and legacy PFX, RSA
 * and EC, made by openssl), mutated at random, through the credential readers and the whole
 * certificate check of `mpprov validate` (a stick whose 802.1X block names the file): never a
 * throw, a parsed result or located problems, within the bound, and no passphrase or private key
 * material (the key's base64 or hex, in part) in any message.
 */

const PASSPHRASE = 'Fuzz-Key-Passphrase-42';
const pki = usePki();

/** Slots a file can sit in; the stick's other slots keep the real, matching files. */
const SLOTS = ['ca_cert', 'client_cert', 'private_key'] as const;

interface Corpus {
  files: { name: string; bytes: Buffer }[];
  /** Every private key's DER, as base64 and hex: a message quoting 24 characters of either leaks it. */
  keyMaterial: string[];
}
const corpus: Corpus = { files: [], keyMaterial: [] };

beforeAll(() => {
  const ca = pki.ca('ca', 'Fuzz Root CA');
  pki.issue('client', 'client.fuzz.test', ca, 'client');
  pki.issue('ec-client', 'ec-client.fuzz.test', ca, 'client', { algorithm: 'p256' });
  const pass = `pass:${PASSPHRASE}`;
  pki.openssl(['pkey', '-in', 'client.key', '-outform', 'DER', '-out', 'client.key.der']);
  pki.openssl(['pkey', '-in', 'ec-client.key', '-outform', 'DER', '-out', 'ec-client.key.der']);
  pki.openssl(['x509', '-in', 'client.pem', '-outform', 'DER', '-out', 'client.der']);
  pki.openssl(['pkey', '-in', 'client.key', '-aes256', '-passout', pass, '-out', 'client-pkcs8-encrypted.key']);
  pki.openssl([
    'rsa',
    '-in',
    'client.key',
    '-traditional',
    '-aes256',
    '-passout',
    pass,
    '-out',
    'client-traditional-encrypted.key',
  ]);
  pki.openssl([
    'pkcs8',
    '-topk8',
    '-in',
    'ec-client.key',
    '-outform',
    'DER',
    '-v2',
    'aes-256-cbc',
    '-passout',
    pass,
    '-out',
    'ec-client-encrypted.der',
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
    pass,
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
    pass,
    '-out',
    'client-legacy.pfx',
  ]);
  pki.openssl([
    'pkcs12',
    '-export',
    '-in',
    'ec-client.pem',
    '-inkey',
    'ec-client.key',
    '-passout',
    pass,
    '-out',
    'ec-client.pfx',
  ]);
  const names = [
    'ca.pem',
    'client.pem',
    'client.der',
    'ec-client.pem',
    'client.key',
    'ec-client.key',
    'client.key.der',
    'ec-client.key.der',
    'client-pkcs8-encrypted.key',
    'client-traditional-encrypted.key',
    'ec-client-encrypted.der',
    'client.pfx',
    'client-legacy.pfx',
    'ec-client.pfx',
  ];
  corpus.files = names.map((name) => ({ name, bytes: pki.read(name) }));
  for (const key of ['client.key.der', 'ec-client.key.der', 'ca.key']) {
    const der = key === 'ca.key' ? pki.openssl(['pkey', '-in', 'ca.key', '-outform', 'DER']) : pki.read(key);
    corpus.keyMaterial.push(der.toString('base64'), der.toString('hex'));
  }
});

/** Runs of base64 or hex in `text` that are a piece of some private key: none may be printed. */
function keyMaterialIn(text: string): string[] {
  const runs = [...text.matchAll(/[A-Za-z0-9+/]{24,}/g)].map((m) => m[0]);
  return runs.filter((run) =>
    corpus.keyMaterial.some((material) => windows(run, 24).some((piece) => material.includes(piece))),
  );
}

function windows(run: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at + size <= run.length; at += 4) out.push(run.slice(at, at + size));
  return out;
}

/** Changes that know PEM: a label swapped, an encryption header added, line ends changed, two files joined. */
type PemMutation =
  | { kind: 'label'; label: string }
  | { kind: 'procType' }
  | { kind: 'crlf' }
  | { kind: 'append'; other: number }
  | { kind: 'base64Char'; at: number; char: string };

const pemMutation: fc.Arbitrary<PemMutation> = fc.oneof(
  fc.record({
    kind: fc.constant('label' as const),
    label: fc.constantFrom(
      'CERTIFICATE',
      'PRIVATE KEY',
      'ENCRYPTED PRIVATE KEY',
      'RSA PRIVATE KEY',
      'EC PRIVATE KEY',
      'PUBLIC KEY',
      'CERTIFICATE REQUEST',
      'PKCS12',
      'X509 CRL',
      'EC PARAMETERS',
      '',
    ),
  }),
  fc.constant({ kind: 'procType' as const }),
  fc.constant({ kind: 'crlf' as const }),
  fc.record({ kind: fc.constant('append' as const), other: fc.nat() }),
  fc.record({
    kind: fc.constant('base64Char' as const),
    at: fc.nat(),
    char: fc.constantFrom('A', '/', '+', '=', '-', ' ', '\n', '!', '\u00e9'),
  }),
);

function applyPemMutation(bytes: Buffer, m: PemMutation): Buffer {
  const text = bytes.toString('latin1');
  switch (m.kind) {
    case 'label':
      return Buffer.from(text.replace(/-----(BEGIN|END) [A-Z0-9 ]+-----/g, `-----$1 ${m.label}-----`), 'latin1');
    case 'procType':
      return Buffer.from(
        text.replace(
          /(-----BEGIN [A-Z0-9 ]+-----\n)/,
          '$1Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,00112233445566778899AABBCCDDEEFF\n\n',
        ),
        'latin1',
      );
    case 'crlf':
      return Buffer.from(text.replace(/\n/g, '\r\n'), 'latin1');
    case 'append':
      return Buffer.concat([bytes, corpus.files[m.other % corpus.files.length]?.bytes ?? Buffer.alloc(0)]);
    case 'base64Char': {
      const at = m.at % (text.length + 1);
      return Buffer.from(text.slice(0, at) + m.char + text.slice(at + 1), 'latin1');
    }
  }
}

type Mutation = { pem: PemMutation } | { bytes: ByteMutation };
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 1, arbitrary: pemMutation.map((pem) => ({ pem })) },
  { weight: 3, arbitrary: byteMutation.map((bytes) => ({ bytes })) },
);

/** The stick's 802.1X block: EAP-TLS with real, matching files, but for `slot`, which names the mutated file. */
function stickConfig(slot: (typeof SLOTS)[number]): string {
  const files: Record<(typeof SLOTS)[number], string> = {
    ca_cert: 'certs/ca.pem',
    client_cert: 'certs/client.pem',
    private_key: 'certs/client-pkcs8-encrypted.key',
  };
  files[slot] = 'certs/fuzzed.bin';
  return [
    'version: 1',
    'monitoring_points:',
    '  - name: mp1',
    '    url: https://192.0.2.10',
    '    interfaces:',
    '      eth1:',
    '        ipv4: { method: dhcp }',
    '        dot1x:',
    '          eap: tls',
    '          identity: client.fuzz.test',
    `          ca_cert: ${files.ca_cert}`,
    `          client_cert: ${files.client_cert}`,
    `          private_key: ${files.private_key}`,
    `          private_key_password: "${PASSPHRASE}"`,
    '',
  ].join('\n');
}

describe('fuzz: mutated certificate and key files through the credential readers and checks', () => {
  it(
    'never throw, give a result or located problems, stay within the bound, and quote no passphrase or key material',
    async () => {
      expect(corpus.files.length).toBe(14);
      const stick = stickWithConfig('');
      for (const { name, bytes } of corpus.files) writeFileSync(join(stick, '..', 'certs', name), bytes);
      const fuzzed = join(stick, '..', 'certs', 'fuzzed.bin');
      const configs = Object.fromEntries(SLOTS.map((slot) => [slot, stickConfig(slot)]));
      let parsed = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.nat({ max: corpus.files.length - 1 }),
          fc.array(mutation, { minLength: 0, maxLength: 4 }),
          fc.constantFrom(...SLOTS),
          fc.constantFrom(PASSPHRASE, 'Wrong-Passphrase-99', undefined),
          async (index, mutations, slot, password) => {
            const original = corpus.files[index]?.bytes ?? Buffer.alloc(0);
            const bytes = mutations.reduce(
              (b, m) => ('pem' in m ? applyPemMutation(b, m.pem) : applyByteMutation(b, m.bytes)),
              original,
            );
            traceInput({ index, mutations, slot, password });
            writeFileSync(fuzzed, bytes);
            writeFileSync(stick, configs[slot] ?? '');
            await withinBound('the readers and validateStick', async () => {
              detectCredentialKind(bytes);
              derTruncation(bytes);
              const certs = readCertificates(bytes);
              const key = readPrivateKey(bytes, password);
              const details = [certs, key].flatMap((r) => ('detail' in r ? [r.detail] : []));
              const anchor = checkTrustAnchor({ name: 'certs/fuzzed.bin', bytes, keyPath: ['tls', 'ca'] });
              const validated = await validateStick(stick, { label: 'mpprov.yaml' });
              if (hasErrors(validated.problems)) refused++;
              else parsed++;
              expectLocated(validated.problems, 'mpprov.yaml', 16);
              const printed = `${printedProblems(validated.problems, validated)}\n${details.join('\n')}\n${JSON.stringify(anchor.problems)}`;
              expectNoSecret(printed, [PASSPHRASE, 'Wrong-Passphrase-99']);
              expect(keyMaterialIn(printed), printed.slice(0, 2000)).toEqual([]);
            });
          },
        ),
        fuzzParameters('credential files', fuzzRuns()),
      );
      expect(parsed).toBeGreaterThan(0);
      expect(refused).toBeGreaterThan(0);
    },
    FUZZ_TIMEOUT_MS,
  );
});
