import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type CredentialSet, checkCredentialSet } from '../../src/certs/index.js';
import { runCli } from '../support/run-cli.js';
import { leakedForms } from '../support/secret-forms.js';
import { tempFolder } from '../support/temp-folder.js';
import { type Issued, usePki } from '../support/test-pki.js';
import { DOT1X, credentialSet } from './credential-sets.js';

/**
 * A PFX or encrypted key asking for more key-derivation iterations than mpprov runs is refused
 * from its ASN.1, before forge derives anything; and one PFX with one password named in several
 * blocks is judged once, though each block holds its own copy of the password.
 */

const PASSWORD = 'Iter-Secret-5521';
const WRONG = 'Not-The-Iter-Secret-77';

const pki = usePki();
let ca: Issued;
let client: Issued;

function pfx(out: string, extra: string[]): void {
  pki.openssl([
    'pkcs12',
    '-export',
    '-in',
    client.cert,
    '-inkey',
    client.key,
    ...extra,
    '-passout',
    `pass:${PASSWORD}`,
    '-out',
    pki.path(out),
  ]);
}

beforeAll(() => {
  ca = pki.ca('iter-ca', 'Iter CA', { algorithm: 'p256' });
  client = pki.issue('client', 'mp-client', ca, 'client', { algorithm: 'p256' });
  pfx('default.p12', []);
  pfx('costly.p12', ['-iter', '200000']);
  // Only the encrypted parts are costly: the MAC runs a single iteration.
  pfx('costly-contents.p12', ['-iter', '200000', '-nomaciter']);
  // Nothing encrypted: only the MAC is costly.
  pfx('costly-mac.p12', ['-iter', '200000', '-keypbe', 'NONE', '-certpbe', 'NONE']);
  for (const [out, iter] of [
    ['costly.key', '200000'],
    ['fine.key', '2048'],
  ] as const)
    pki.openssl([
      'pkcs8',
      '-topk8',
      '-v2',
      'aes-256-cbc',
      '-iter',
      iter,
      '-in',
      client.key,
      '-passout',
      `pass:${PASSWORD}`,
      '-out',
      pki.path(out),
    ]);
});

const set = (key: string, cert?: string): CredentialSet =>
  credentialSet(pki, { ca: 'iter-ca.pem', cert, key, password: PASSWORD }, DOT1X);
const problemsOf = (s: CredentialSet) => checkCredentialSet(s, { now: pki.reference }).problems;

describe('a key file with too many key-derivation iterations', () => {
  it.each(['costly.p12', 'costly-contents.p12', 'costly-mac.p12'])('refuses the PFX %s where it is named', (name) => {
    expect(problemsOf(set(name))).toEqual([
      {
        severity: 'error',
        path: [...DOT1X, 'private_key'],
        message: `certs/${name} uses 200 000 key-derivation iterations, more than mpprov accepts (100 000)`,
        hint: 'export it again with fewer (openssl pkcs12 -iter 2048)',
      },
    ]);
  });

  it('refuses an encrypted PKCS#8 key the same way', () => {
    expect(problemsOf(set('costly.key', 'client.pem'))).toEqual([
      {
        severity: 'error',
        path: [...DOT1X, 'private_key'],
        message: 'certs/costly.key uses 200 000 key-derivation iterations, more than mpprov accepts (100 000)',
        hint: 'export it again with fewer (openssl pkcs8 -topk8 -iter 2048)',
      },
    ]);
  });

  it('still reads a PFX and a key at the usual counts', () => {
    expect(problemsOf(set('default.p12'))).toEqual([]);
    expect(problemsOf(set('fine.key', 'client.pem'))).toEqual([]);
  });
});

interface Report {
  valid: boolean;
  problems: { severity: string; path: string; message: string; hint?: string }[];
}

/** A stick of four points whose 802.1X blocks name the same PFX with the same password. */
function stick(pfxName: string, password: string): string {
  const dir = join(tempFolder('kdf-iterations'), 'stick');
  mkdirSync(dir);
  const lines = ['version: 1', 'monitoring_points:'];
  for (let i = 0; i < 4; i++)
    lines.push(
      `  - name: mp${i}`,
      `    url: https://10.0.0.${i + 1}`,
      `    password: Admin-Iter-${i}`,
      '    tls: { insecure: true }',
      '    interfaces:',
      '      eth1:',
      '        ipv4: { method: dhcp }',
      `        dot1x: { eap: tls, identity: mp${i}, ca_cert: ca.pem, private_key: key.p12, private_key_password: "${password}" }`,
    );
  writeFileSync(join(dir, 'mpprov.yaml'), `${lines.join('\n')}\n`);
  copyFileSync(pki.path('iter-ca.pem'), join(dir, 'ca.pem'));
  copyFileSync(pki.path(pfxName), join(dir, 'key.p12'));
  return dir;
}

const dot1xErrors = (report: Report) =>
  report.problems.filter((p) => p.severity === 'error' && p.path.includes('.dot1x.'));
const ALSO = ' (also named at monitoring_points[1].interfaces.eth1.dot1x and 2 other places)';

describe('validate, one PFX with one password in four blocks', () => {
  it('refuses a costly PFX once, naming the other blocks', { timeout: 60_000 }, async () => {
    const dir = stick('costly.p12', PASSWORD);
    const run = await runCli(['validate', '--json', dir]);
    const report = JSON.parse(run.stdout) as Report;
    expect(report.valid).toBe(false);
    expect(dot1xErrors(report)).toEqual([
      expect.objectContaining({
        path: 'monitoring_points[0].interfaces.eth1.dot1x.private_key',
        message: `key.p12 uses 200 000 key-derivation iterations, more than mpprov accepts (100 000)${ALSO}`,
        hint: 'export it again with fewer (openssl pkcs12 -iter 2048)',
      }),
    ]);
    expect(leakedForms(run.stdout + run.stderr, [PASSWORD])).toEqual([]);
  });

  it('judges an equal wrong password once', { timeout: 60_000 }, async () => {
    const dir = stick('default.p12', WRONG);
    const run = await runCli(['validate', '--json', dir]);
    const report = JSON.parse(run.stdout) as Report;
    expect(dot1xErrors(report)).toEqual([
      expect.objectContaining({
        path: 'monitoring_points[0].interfaces.eth1.dot1x.private_key_password',
        message: `private_key_password is the wrong password for key.p12${ALSO}`,
      }),
    ]);
    expect(leakedForms(run.stdout + run.stderr, [PASSWORD, WRONG])).toEqual([]);
  });

  it('validates a PFX at the default count as before', { timeout: 60_000 }, async () => {
    const run = await runCli(['validate', '--json', stick('default.p12', PASSWORD)]);
    const report = JSON.parse(run.stdout) as Report;
    expect(dot1xErrors(report)).toEqual([]);
    expect(report.valid).toBe(true);
  });
});
