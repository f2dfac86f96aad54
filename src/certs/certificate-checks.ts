import type { X509Certificate } from 'node:crypto';
import { type KeyPath, Severity, type UnplacedProblem } from '../core/problem.js';
import type { CredentialFile } from './credential-file.js';
import type { FileVerdicts } from './file-verdicts.js';
import { type KeyType, keyTypeOf } from './key-type.js';
import { checkRsaSize, checkSignatureAlgorithm } from './weak-material.js';

export interface CheckOptions {
  /** The moment validity is judged at; tests pin it. */
  now?: Date;
  /** A certificate that expires within this many days gets a warning. */
  expiryWarningDays?: number;
  /** The verdicts of one load: a CA file named by many credential sets is judged once. */
  verdicts?: FileVerdicts;
}

/** A certificate with the words that name it in messages and the key path problems point at. */
export interface LabelledCertificate {
  cert: X509Certificate;
  label: string;
  path: KeyPath;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EXTENDED_KEY_USAGE = '2.5.29.37.0';

/**
 * A lone certificate file is named by its path; a certificate among several, or inside a PFX, by
 * its position and common name as well, so the technician knows which one is meant.
 */
export function labelCertificates(
  file: CredentialFile,
  certs: X509Certificate[],
  inContainer = false,
): LabelledCertificate[] {
  return certs.map((cert, index) => {
    let label = file.name;
    if (certs.length > 1) label = `certificate ${index + 1} ("${commonName(cert)}") in ${file.name}`;
    else if (inContainer) label = `the certificate in ${file.name}`;
    return { cert, label, path: file.keyPath };
  });
}

export function commonName(cert: X509Certificate): string {
  const lines = cert.subject.split('\n');
  const cn = lines.find((line) => line.startsWith('CN='));
  return cn === undefined ? lines.join(', ') : cn.slice(3);
}

export function checkValidity(c: LabelledCertificate, options: CheckOptions, problems: UnplacedProblem[]): void {
  const now = options.now ?? new Date();
  const warningDays = options.expiryWarningDays ?? 30;
  const notBefore = new Date(c.cert.validFrom);
  const notAfter = new Date(c.cert.validTo);
  if (Number.isNaN(notBefore.getTime()) || Number.isNaN(notAfter.getTime())) {
    problems.push({
      severity: Severity.Error,
      path: c.path,
      message: `${c.label} has validity dates that cannot be read; it may be damaged`,
      hint: 'copy the file again, or export the certificate again from its source',
    });
    return;
  }

  if (now < notBefore) {
    problems.push({
      severity: Severity.Error,
      path: c.path,
      message: `${c.label} is not valid until ${isoDate(notBefore)}`,
      hint: 'check the clock of the machine that issued it; the Monitoring Point refuses it before that date',
    });
  } else if (now > notAfter) {
    problems.push({
      severity: Severity.Error,
      path: c.path,
      message: `${c.label} expired on ${isoDate(notAfter)}`,
      hint: 'renew the certificate, or replace it with a current one',
    });
  } else {
    const days = Math.ceil((notAfter.getTime() - now.getTime()) / DAY_MS);
    if (days > warningDays) return;
    problems.push({
      severity: Severity.Warning,
      path: c.path,
      message: `${c.label} expires on ${isoDate(notAfter)}, in ${days} day${days === 1 ? '' : 's'}`,
      hint: 'renew it before then; it stops working that day',
    });
  }
}

export function checkCertificateKeyType(c: LabelledCertificate, problems: UnplacedProblem[]): void {
  let type: KeyType;
  try {
    type = keyTypeOf(c.cert.publicKey);
  } catch {
    type = { supported: false, description: 'a key of a type mpprov cannot decode' };
  }
  if (type.supported) {
    checkRsaSize(c.cert.publicKey, c.label, c.path, problems);
    checkSignatureAlgorithm(c.cert, c.label, c.path, problems);
    return;
  }
  problems.push({
    severity: Severity.Error,
    path: c.path,
    message: `${c.label} certifies ${type.description}, which the Monitoring Point does not support`,
    hint: 'use a certificate for an RSA key or an EC key on curve P-256 or P-384',
  });
}

/** `slot` is the key the technician wrote (`ca_cert`, `tls.ca`); `hint` says which CA belongs there. */
export function checkIsCa(c: LabelledCertificate, slot: string, hint: string, problems: UnplacedProblem[]): void {
  if (c.cert.ca) return;
  problems.push({
    severity: Severity.Error,
    path: c.path,
    message: `${c.label} is not a CA certificate (no basicConstraints CA:TRUE), but ${slot} needs one`,
    hint,
  });
}

/** An absent extended key usage technically allows anything, but RADIUS servers often insist on clientAuth. */
export function checkClientAuth(c: LabelledCertificate, problems: UnplacedProblem[]): void {
  const usages = c.cert.keyUsage ?? [];
  if (usages.includes(CLIENT_AUTH) || usages.includes(ANY_EXTENDED_KEY_USAGE)) return;
  problems.push({
    severity: Severity.Warning,
    path: c.path,
    message: `${c.label} is not meant for client authentication: its extended key usage lacks clientAuth`,
    hint: 'many RADIUS servers refuse it; ask for a client certificate with extended key usage clientAuth',
  });
}

/** Whether `leaf` leads to one of `anchors` through the `intermediates` given beside it. */
export function chainsTo(leaf: X509Certificate, anchors: X509Certificate[], intermediates: X509Certificate[]): boolean {
  const used = new Set<X509Certificate>();
  let current = leaf;
  // A real chain is short; the bound also stops a loop of certificates that issue each other.
  for (let depth = 0; depth < 8; depth++) {
    if (anchors.some((anchor) => issuedBy(current, anchor))) return true;
    const next = intermediates.find((candidate) => !used.has(candidate) && issuedBy(current, candidate));
    if (next === undefined) return false;
    used.add(next);
    current = next;
  }
  return false;
}

/** Issuer name and signature both: a name match alone is what a forged look-alike CA has too. */
function issuedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}
