import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { tempFolder } from './temp-folder.js';

/**
 * The tests' one PKI builder: keys and certificates made with the real `openssl` CLI in a temp
 * folder, so tests read exactly what a technician's tools write. `openssl ca` signs every
 * certificate because OpenSSL 3.0's `x509 -req` cannot set arbitrary validity dates (its
 * -not_before/-not_after came in 3.4). Dates are whole seconds relative to one reference time,
 * so a test can state the exact day a message names. Recipes built on it: lab-pki.ts (the
 * 802.1X lab's files) and device-certificates.ts (a CA and the device's HTTPS certificate).
 */
export type KeyAlgorithm = 'rsa' | 'p256' | 'p384' | 'p521' | 'ed25519';
export type Profile = 'ca' | 'client' | 'client-no-eku' | 'server' | 'leaf';

export interface Issued {
  key: string;
  cert: string;
}

export interface CertOptions {
  /** Days from `reference`; negative is the past. Defaults: -1 and 3650. */
  startDays?: number;
  endDays?: number;
  /** Absolute dates instead of startDays/endDays, for certificates a committed expectation names. */
  validFrom?: Date;
  validTo?: Date;
  /** An existing key file; default a new key of `algorithm` (default RSA 2048). */
  key?: string;
  algorithm?: KeyAlgorithm;
  /** The whole subject; default `/O=mpprov TEST ONLY/CN=<cn>`, which marks the certificate as a test one. */
  subject?: string;
  /** subjectAltName, e.g. `DNS:radius.lab.test` or `IP:127.0.0.1`. */
  san?: string;
}

const PROFILE_EXTENSIONS: Record<Profile, readonly string[]> = {
  ca: [
    'basicConstraints = critical, CA:TRUE',
    'keyUsage = critical, keyCertSign, cRLSign',
    'subjectKeyIdentifier = hash',
  ],
  client: ['basicConstraints = CA:FALSE', 'extendedKeyUsage = clientAuth'],
  'client-no-eku': ['basicConstraints = CA:FALSE', 'keyUsage = critical, digitalSignature'],
  server: ['basicConstraints = CA:FALSE', 'extendedKeyUsage = serverAuth'],
  leaf: ['basicConstraints = CA:FALSE'],
};

const KEY_OPTIONS: Record<KeyAlgorithm, readonly string[]> = {
  rsa: ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'],
  p256: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'],
  p384: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384'],
  p521: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-521'],
  ed25519: ['-algorithm', 'ED25519'],
};

/** A class because it holds state: the folder, the CA database and the reference time. */
export class TestPki {
  readonly dir = tempFolder('pki');
  /** Whole seconds: certificates carry no milliseconds, so comparisons stay exact. */
  readonly reference = new Date(Math.floor(Date.now() / 1000) * 1000);

  constructor() {
    writeFileSync(join(this.dir, 'index.txt'), '');
    writeFileSync(join(this.dir, 'serial'), '01\n');
    writeFileSync(
      join(this.dir, 'ca.cnf'),
      `[req]\ndistinguished_name = dn\n[dn]\n[ca]\ndefault_ca = test_ca\n[test_ca]\ndatabase = ${this.dir}/index.txt\n` +
        `new_certs_dir = ${this.dir}\nserial = ${this.dir}/serial\ndefault_md = sha256\npolicy = policy_any\nunique_subject = no\n` +
        '[policy_any]\norganizationName = optional\ncommonName = supplied\n',
    );
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  /** A file's bytes, as the stick loader reads them (a Buffer). */
  read(name: string): Buffer {
    return readFileSync(this.path(name));
  }

  write(name: string, bytes: Uint8Array | string): string {
    writeFileSync(this.path(name), bytes);
    return this.path(name);
  }

  openssl(args: string[]): Buffer {
    return execFileSync('openssl', args, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** A PKCS#8 PEM private key, as `openssl genpkey` writes it. */
  key(name: string, algorithm: KeyAlgorithm = 'rsa'): string {
    this.openssl(['genpkey', ...KEY_OPTIONS[algorithm], '-out', this.path(name)]);
    return this.path(name);
  }

  /** A self-signed CA: `<name>.pem` and `<name>.key`. */
  ca(name: string, cn: string, options: CertOptions = {}): Issued {
    const key = options.key ?? this.key(`${name}.key`, options.algorithm ?? 'rsa');
    return { key, cert: this.sign(name, cn, key, 'ca', undefined, options) };
  }

  /** A certificate issued by `issuer` with the given extension profile: `<name>.pem` and `<name>.key`. */
  issue(name: string, cn: string, issuer: Issued, profile: Profile, options: CertOptions = {}): Issued {
    const key = options.key ?? this.key(`${name}.key`, options.algorithm ?? 'rsa');
    return { key, cert: this.sign(name, cn, key, profile, issuer, options) };
  }

  date(days: number): Date {
    return new Date(this.reference.getTime() + days * 86_400_000);
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private sign(
    name: string,
    cn: string,
    key: string,
    profile: Profile,
    issuer: Issued | undefined,
    options: CertOptions,
  ): string {
    const csr = this.path(`${name}.csr`);
    const cert = this.path(`${name}.pem`);
    const config = this.path('ca.cnf');
    // Its own extension file: the subjectAltName differs from one certificate to the next.
    const extensions = this.write(
      `${name}.ext`,
      [
        '[ext]',
        ...PROFILE_EXTENSIONS[profile],
        ...(options.san === undefined ? [] : [`subjectAltName = ${options.san}`]),
        '',
      ].join('\n'),
    );
    this.openssl([
      'req',
      '-new',
      '-key',
      key,
      '-subj',
      options.subject ?? `/O=mpprov TEST ONLY/CN=${cn}`,
      '-config',
      config,
      '-out',
      csr,
    ]);
    this.openssl([
      'ca',
      '-batch',
      '-notext',
      '-config',
      config,
      '-rand_serial',
      ...(issuer ? ['-cert', issuer.cert, '-keyfile', issuer.key] : ['-selfsign', '-keyfile', key]),
      '-startdate',
      asn1Time(options.validFrom ?? this.date(options.startDays ?? -1)),
      '-enddate',
      asn1Time(options.validTo ?? this.date(options.endDays ?? 3650)),
      '-extfile',
      extensions,
      '-extensions',
      'ext',
      '-in',
      csr,
      '-out',
      cert,
    ]);
    return cert;
  }
}

/** A PKI for the tests of one file (or describe block), removed after them. */
export function usePki(): TestPki {
  const pki = new TestPki();
  afterAll(() => pki.dispose());
  return pki;
}

function asn1Time(date: Date): string {
  return `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
}

export function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}
