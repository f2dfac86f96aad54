import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway PKI made with the real `openssl` CLI in a temp directory, so tests read exactly what
 * a technician's tools write. `openssl ca` is used for every certificate because OpenSSL 3.0's
 * `x509 -req` cannot set arbitrary validity dates (its -not_before/-not_after came in 3.4).
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
  key?: string;
  algorithm?: KeyAlgorithm;
}

const EXTENSIONS = `
[ext_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[ext_client]
basicConstraints = CA:FALSE
extendedKeyUsage = clientAuth
[ext_client-no-eku]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
[ext_server]
basicConstraints = CA:FALSE
extendedKeyUsage = serverAuth
[ext_leaf]
basicConstraints = CA:FALSE
`;

/** A class because it holds state: the directory and the reference time every date is relative to. */
export class TestPki {
  readonly dir = mkdtempSync(join(tmpdir(), 'mpprov-certs-'));
  /** Whole seconds: certificates carry no milliseconds, so comparisons stay exact. */
  readonly reference = new Date(Math.floor(Date.now() / 1000) * 1000);
  constructor() {
    writeFileSync(join(this.dir, 'index.txt'), '');
    writeFileSync(join(this.dir, 'serial'), '01\n');
    writeFileSync(
      join(this.dir, 'ca.cnf'),
      `[req]\ndistinguished_name = dn\n[dn]\n[ca]\ndefault_ca = test_ca\n[test_ca]\ndatabase = ${this.dir}/index.txt\n` +
        `new_certs_dir = ${this.dir}\nserial = ${this.dir}/serial\ndefault_md = sha256\npolicy = policy_any\nunique_subject = no\n` +
        `[policy_any]\norganizationName = optional\ncommonName = supplied\n${EXTENSIONS}`,
    );
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  read(name: string): Uint8Array {
    return new Uint8Array(readFileSync(this.path(name)));
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
    const options: Record<KeyAlgorithm, string[]> = {
      rsa: ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'],
      p256: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'],
      p384: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384'],
      p521: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-521'],
      ed25519: ['-algorithm', 'ED25519'],
    };
    this.openssl(['genpkey', ...options[algorithm], '-out', this.path(name)]);
    return this.path(name);
  }

  /** A self-signed CA; dates relative to `reference`. */
  ca(name: string, cn: string, options: CertOptions = {}): Issued {
    const key = options.key ?? this.key(`${name}.key`, options.algorithm ?? 'rsa');
    return { key, cert: this.sign(name, cn, key, 'ca', undefined, options) };
  }

  /** A certificate issued by `issuer` with the given extension profile. */
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

  private sign(name: string, cn: string, key: string, profile: Profile, issuer: Issued | undefined, options: CertOptions): string {
    const csr = this.path(`${name}.csr`);
    const cert = this.path(`${name}.pem`);
    const config = this.path('ca.cnf');
    this.openssl(['req', '-new', '-key', key, '-subj', `/O=mpprov TEST ONLY/CN=${cn}`, '-config', config, '-out', csr]);
    this.openssl([
      'ca', '-batch', '-notext', '-config', config, '-rand_serial',
      ...(issuer ? ['-cert', issuer.cert, '-keyfile', issuer.key] : ['-selfsign', '-keyfile', key]),
      '-startdate', asn1Time(this.date(options.startDays ?? -1)),
      '-enddate', asn1Time(this.date(options.endDays ?? 3650)),
      '-extensions', `ext_${profile}`, '-in', csr, '-out', cert,
    ]);
    return cert;
  }
}

function asn1Time(date: Date): string {
  return `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
}

export function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}
