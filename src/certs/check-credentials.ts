import { type KeyObject, X509Certificate, createPublicKey } from 'node:crypto';
import { type KeyPath, Severity, type UnplacedProblem } from '../core/problem.js';
import {
  type CheckOptions,
  type LabelledCertificate,
  chainsTo,
  checkCertificateKeyType,
  checkClientAuth,
  checkIsCa,
  checkValidity,
  commonName,
  labelCertificates,
} from './certificate-checks.js';
import { type CredentialFile, type SecretValue, keyLabel, sha256Hex, siblingPath } from './credential-file.js';
import { CredentialKind, detectCredentialKind, isPrivateKeyKind } from './detect.js';
import { keyTypeOf } from './key-type.js';
import { checkRsaSize } from './weak-material.js';
import { openCertificateFile, openPrivateKeyFile } from './open-credential-file.js';

export type { CheckOptions } from './certificate-checks.js';
export type { CredentialFile } from './credential-file.js';

/** One 802.1X credential set: the interface's own, or the PEAP inner (phase 2) set. */
export interface CredentialSet {
  caCert?: CredentialFile;
  clientCert?: CredentialFile;
  privateKey?: CredentialFile;
  privateKeyPassword?: SecretValue;
}

export interface CredentialCheck {
  problems: UnplacedProblem[];
  /** Facts the plan needs: it uploads each file under a name derived from its content. */
  files: { keyPath: KeyPath; name: string; kind: CredentialKind; sha256: string }[];
  /** The private key is a PFX that carries the client certificate, so client_cert may be left out. */
  keyHoldsCertificate: boolean;
  /** The client certificate's validity (from client_cert or the PFX): a port may decide after it expired. */
  clientCertValidity?: { notBefore: string; notAfter: string };
  /** Every other certificate the set installs (its CA chain, a PFX's or client_cert file's extra ones), for the device's clock. */
  otherCertificates: InstalledCertificate[];
}

/**
 * A certificate a credential set puts on the device, besides the client certificate: which key
 * of the set brings it (`ca_cert`, `client_cert`, `private_key` for a PFX), where in that file,
 * and when it is valid. No file name: the same bytes may be named differently elsewhere.
 */
export interface InstalledCertificate {
  key: 'ca_cert' | 'client_cert' | 'private_key';
  /** Position in its file (0-based) and how many the file holds: "certificate 2 of 3". */
  index: number;
  count: number;
  commonName: string;
  notBefore: string;
  notAfter: string;
}

/**
 * Checks one 802.1X credential set as the Monitoring Point will use it: each file holds what its
 * key asks for, keys decrypt, key and certificate belong together, CA and validity rules hold.
 * Reads no files and never throws; every finding is a problem at the key that named the file.
 */
export function checkCredentialSet(set: CredentialSet, options: CheckOptions = {}): CredentialCheck {
  const problems: UnplacedProblem[] = [];
  const given = [set.caCert, set.clientCert, set.privateKey].filter((f): f is CredentialFile => f !== undefined);
  const files = given.map((f) => ({
    keyPath: f.keyPath,
    name: f.name,
    kind: detectCredentialKind(f.bytes),
    sha256: sha256Hex(f.bytes),
  }));

  const caCerts = set.caCert ? caCertificatesIn(set.caCert, problems, options) : [];
  const clientCerts = set.clientCert ? certificatesIn(set.clientCert, problems, options) : [];

  const key = set.privateKey ? keyIn(set.privateKey, set.privateKeyPassword, problems, options) : undefined;
  const pfxClient = key ? key.pfxCerts.find((c) => samePublicKey(c.cert, key.publicKey)) : undefined;
  if (key && set.privateKey && key.pfxCerts.length > 0 && pfxClient === undefined) {
    problems.push({
      severity: Severity.Error,
      path: set.privateKey.keyPath,
      message: `the private key in ${set.privateKey.name} matches none of the certificates in it`,
      hint: 'export the PFX again with the certificate and its own key',
    });
  }

  const clientCert = clientCerts[0];
  // A file with the CA first and the client certificate after it: the supplicant takes the first
  // one, so this does not work, but "the key does not match" would send the engineer hunting keys.
  const laterMatch = key ? clientCerts.findIndex((c, index) => index > 0 && samePublicKey(c.cert, key.publicKey)) : -1;
  if (
    set.privateKey &&
    set.clientCert &&
    key &&
    clientCert &&
    !samePublicKey(clientCert.cert, key.publicKey) &&
    laterMatch > 0 &&
    pfxClient === undefined
  ) {
    problems.push({
      severity: Severity.Error,
      path: set.clientCert.keyPath,
      message: `${set.clientCert.name} holds the client certificate as certificate ${laterMatch + 1}, after ${clientCert.cert.ca ? 'a CA certificate' : 'another certificate'} ("${commonName(clientCert.cert)}"); the client certificate must come first`,
      hint: `put the client certificate first in ${set.clientCert.name}, then the CA certificates that issued it`,
    });
  } else if (set.privateKey && set.clientCert && key && clientCert && !samePublicKey(clientCert.cert, key.publicKey)) {
    problems.push(mismatch(set.privateKey, set.clientCert, pfxClient !== undefined));
  }

  // Without client_cert the key must carry the certificate. A PFX that could not be opened may well
  // carry one, and one whose certificates do not match has its own problem: say nothing more then.
  const keyKind = set.privateKey ? detectCredentialKind(set.privateKey.bytes) : CredentialKind.Unknown;
  const pfxSaysEnough = keyKind === CredentialKind.Pfx && (key === undefined || key.pfxCerts.length > 0);
  if (set.privateKey && !set.clientCert && isPrivateKeyKind(keyKind) && !pfxSaysEnough) {
    const clientSlot = keyLabel(siblingPath(set.privateKey.keyPath, 'client_cert'));
    problems.push({
      severity: Severity.Error,
      path: set.privateKey.keyPath,
      message: `${set.privateKey.name} holds no client certificate and ${clientSlot} is not given`,
      hint: `add ${clientSlot}: with the client certificate, or use a PFX file that holds both key and certificate`,
    });
  }

  // With the CA placed first, the leaf's own checks still apply to the leaf, not to that CA.
  const leaf = (laterMatch > 0 ? clientCerts[laterMatch] : undefined) ?? clientCert ?? pfxClient;
  if (leaf !== undefined) {
    checkClientAuth(leaf, problems);
    checkIssuer(
      leaf,
      [...clientCerts.filter((c) => c !== leaf), ...(key?.pfxCerts ?? [])],
      caCerts,
      set.caCert,
      problems,
    );
  }
  // A damaged date that OpenSSL still parses is no Date: checkValidity says so; no validity then.
  const [notBefore, notAfter] = leaf === undefined ? [] : [new Date(leaf.cert.validFrom), new Date(leaf.cert.validTo)];
  const datesRead =
    notBefore !== undefined &&
    notAfter !== undefined &&
    !Number.isNaN(notBefore.getTime()) &&
    !Number.isNaN(notAfter.getTime());
  const validity = datesRead
    ? { clientCertValidity: { notBefore: notBefore.toISOString(), notAfter: notAfter.toISOString() } }
    : {};
  const otherCertificates = [
    ...installed('ca_cert', caCerts, leaf),
    ...installed('client_cert', clientCerts, leaf),
    ...installed('private_key', key?.pfxCerts ?? [], leaf),
  ];
  return { problems, files, keyHoldsCertificate: pfxClient !== undefined, ...validity, otherCertificates };
}

/** The certificates of one file except the client certificate, with dates that can be read. */
function installed(
  key: InstalledCertificate['key'],
  certs: readonly LabelledCertificate[],
  leaf: LabelledCertificate | undefined,
): InstalledCertificate[] {
  const found: InstalledCertificate[] = [];
  for (const [index, c] of certs.entries()) {
    if (c === leaf) continue;
    const notBefore = new Date(c.cert.validFrom);
    const notAfter = new Date(c.cert.validTo);
    // A damaged date is checkValidity's problem already.
    if (Number.isNaN(notBefore.getTime()) || Number.isNaN(notAfter.getTime())) continue;
    found.push({
      key,
      index,
      count: certs.length,
      commonName: commonName(c.cert),
      notBefore: notBefore.toISOString(),
      notAfter: notAfter.toISOString(),
    });
  }
  return found;
}

/**
 * Checks the file behind `tls.ca`: the CA certificates mpprov trusts for the device's HTTPS.
 * Never throws; problems point at the key that named the file.
 */
export function checkTrustAnchor(file: CredentialFile, options: CheckOptions = {}): { problems: UnplacedProblem[] } {
  const problems: UnplacedProblem[] = [];
  const slot = keyLabel(file.keyPath);
  const certs = openCertificateFile(file, problems, false) ?? [];
  // Key types are not judged here: mpprov's own TLS stack, not the Monitoring Point, uses this file.
  for (const c of labelCertificates(file, certs)) {
    checkValidity(c, options, problems);
    checkIsCa(
      c,
      slot,
      `point ${slot}: at the certificate of the CA that issued the device's HTTPS certificate, or pin the device with fingerprint_sha256:`,
      problems,
    );
  }
  return { problems };
}

/**
 * The CA certificates of a ca_cert file and their own problems. With `options.verdicts` a file
 * named by many blocks (one CA bundle for every device, each with its own client certificate) is
 * read and judged once; its problems are said at its first reference.
 */
function caCertificatesIn(
  file: CredentialFile,
  problems: UnplacedProblem[],
  options: CheckOptions,
): LabelledCertificate[] {
  const slot = keyLabel(file.keyPath);
  const judge = (): { problems: UnplacedProblem[]; facts: LabelledCertificate[] } => {
    const own: UnplacedProblem[] = [];
    const certs = certificatesIn(file, own, options);
    for (const ca of certs)
      checkIsCa(
        ca,
        slot,
        `point ${slot}: at the certificate of the CA that issued the RADIUS server's certificate`,
        own,
      );
    return { problems: own, facts: certs };
  };
  if (options.verdicts === undefined) {
    const judged = judge();
    problems.push(...judged.problems);
    return judged.facts;
  }
  return options.verdicts.judge(slot, [file.bytes], file.keyPath, judge).facts;
}

function certificatesIn(
  file: CredentialFile,
  problems: UnplacedProblem[],
  options: CheckOptions,
): LabelledCertificate[] {
  const labelled = labelCertificates(file, openCertificateFile(file, problems) ?? []);
  for (const c of labelled) {
    checkCertificateKeyType(c, problems);
    checkValidity(c, options, problems);
  }
  return labelled;
}

interface ReadKey {
  publicKey: KeyObject;
  pfxCerts: LabelledCertificate[];
}

function keyIn(
  file: CredentialFile,
  password: SecretValue | undefined,
  problems: UnplacedProblem[],
  options: CheckOptions,
): ReadKey | undefined {
  const { contents } = openPrivateKeyFile(file, password, problems);
  if (contents === undefined) return undefined;
  const type = keyTypeOf(contents.key);
  if (!type.supported) {
    problems.push({
      severity: Severity.Error,
      path: file.keyPath,
      message: `${file.name} holds ${type.description}, which the Monitoring Point does not support`,
      hint: 'use an RSA key or an EC key on curve P-256 or P-384',
    });
  }
  // A PFX's own certificate is not checked as a certificate below (the key's checks cover it), so its size is judged here.
  if (type.supported && contents.certificates.length > 0) checkRsaSize(contents.key, file.name, file.keyPath, problems);
  const pfxCerts = labelCertificates(file, contents.certificates, true);
  for (const c of pfxCerts) {
    // The key's own type problem covers its certificate; other certificates get their own.
    if (!samePublicKey(c.cert, contents.key)) checkCertificateKeyType(c, problems);
    checkValidity(c, options, problems);
  }
  return { publicKey: createPublicKey(contents.key), pfxCerts };
}

/** A client_cert whose key is not the private key: the fix depends on whether a PFX brought its own. */
function mismatch(keyFile: CredentialFile, certFile: CredentialFile, pfxHasCertificate: boolean): UnplacedProblem {
  if (pfxHasCertificate) {
    return {
      severity: Severity.Error,
      path: certFile.keyPath,
      message: `${certFile.name} differs from the client certificate inside ${keyFile.name}: their public keys differ`,
      hint: `leave out ${keyLabel(certFile.keyPath)}, since the PFX carries the client certificate, or give the matching one`,
    };
  }
  return {
    severity: Severity.Error,
    path: keyFile.keyPath,
    message: `${keyFile.name} does not match the client certificate ${certFile.name}: their public keys differ`,
    hint: 'use the key the certificate was issued for, or the certificate issued for this key',
  };
}

function checkIssuer(
  leaf: LabelledCertificate,
  intermediates: LabelledCertificate[],
  caCerts: LabelledCertificate[],
  caFile: CredentialFile | undefined,
  problems: UnplacedProblem[],
): void {
  if (caFile === undefined || caCerts.length === 0) return;
  const anchors = caCerts.map((c) => c.cert);
  if (
    chainsTo(
      leaf.cert,
      anchors,
      intermediates.map((c) => c.cert),
    )
  )
    return;
  const caSlot = keyLabel(caFile.keyPath);
  // A warning only: ca_cert verifies the RADIUS server, which may trust another issuer for clients.
  problems.push({
    severity: Severity.Warning,
    path: leaf.path,
    message: `${leaf.label} was not issued by the CA in ${caSlot} (${caFile.name})`,
    hint: `fine if the RADIUS server trusts its issuer "${issuerName(leaf.cert)}" for client certificates; otherwise use one from the CA in ${caSlot}`,
  });
}

function issuerName(cert: X509Certificate): string {
  const cn = cert.issuer.split('\n').find((line) => line.startsWith('CN='));
  return cn === undefined ? cert.issuer.split('\n').join(', ') : cn.slice(3);
}

/** Compares public keys as SPKI DER. A key node cannot decode matches nothing, rather than throwing. */
function samePublicKey(a: X509Certificate | KeyObject, b: X509Certificate | KeyObject): boolean {
  try {
    const key = (x: X509Certificate | KeyObject): KeyObject => (x instanceof X509Certificate ? x.publicKey : x);
    return spki(key(a)).equals(spki(key(b)));
  } catch {
    return false;
  }
}

/** node 20's createPublicKey refuses a KeyObject that is already public, hence the branch. */
function spki(key: KeyObject): Buffer {
  return (key.type === 'public' ? key : createPublicKey(key)).export({ type: 'spki', format: 'der' });
}
