import type { KeyObject, X509Certificate } from 'node:crypto';
import { type KeyPath, Severity, type UnplacedProblem } from '../core/problem.js';

/**
 * Material a network engineer would not deploy, said as they would say it.
 *
 * RSA size: under 2048 bits is a warning, under 1024 an error. 2048 is the floor NIST and the CA/B
 * Forum set, and OpenSSL at security level 2 (Debian's and Ubuntu's default, which a Monitoring
 * Point's supplicant or the RADIUS server may run) refuses less; but level 1 setups still accept
 * 1024, so it may work today. Under 1024 bits nothing current accepts it (RSA-768 was factored in
 * 2009), so it cannot work: an error.
 *
 * Signatures: SHA-1 is a warning (collisions are practical, SHAttered 2017; many RADIUS servers and
 * OpenSSL level 2 refuse it), MD5 and MD2 errors (forged certificates were shown in 2008). A
 * self-signed certificate's own signature is skipped: a trust anchor is trusted for being
 * there, nobody verifies its signature.
 */

export function checkRsaSize(key: KeyObject, label: string, path: KeyPath, problems: UnplacedProblem[]): void {
  if (key.asymmetricKeyType !== 'rsa') return;
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (bits === undefined || bits >= 2048) return;
  problems.push({
    severity: bits < 1024 ? Severity.Error : Severity.Warning,
    path,
    message: `${label} has an RSA key of ${bits} bits${bits < 1024 ? ', which no current TLS stack accepts' : ', under the 2048 bits current TLS stacks require'}`,
    hint: 'issue a new certificate with an RSA key of at least 2048 bits, or an EC key on P-256',
  });
}

/** The signature algorithms worth a word, by their DER-encoded OID. */
const WEAK_SIGNATURES: Record<string, { name: string; severity: Severity }> = {
  '2a864886f70d010105': { name: 'SHA-1', severity: Severity.Warning },
  '2a8648ce3d0401': { name: 'SHA-1', severity: Severity.Warning },
  '2a8648ce380403': { name: 'SHA-1', severity: Severity.Warning },
  '2a864886f70d010104': { name: 'MD5', severity: Severity.Error },
  '2a864886f70d010102': { name: 'MD2', severity: Severity.Error },
};

export function checkSignatureAlgorithm(
  cert: X509Certificate,
  label: string,
  path: KeyPath,
  problems: UnplacedProblem[],
): void {
  if (isSelfSigned(cert)) return;
  const oid = signatureAlgorithmOid(cert.raw);
  const weak = oid === undefined ? undefined : WEAK_SIGNATURES[oid];
  if (weak === undefined) return;
  problems.push({
    severity: weak.severity,
    path,
    message: `${label} is signed with ${weak.name}, which ${weak.severity === Severity.Error ? 'lets anyone forge such a certificate' : 'is no longer collision-resistant; many RADIUS servers and TLS stacks refuse it'}`,
    hint: 'ask its CA to issue it again signed with SHA-256',
  });
}

function isSelfSigned(cert: X509Certificate): boolean {
  try {
    return cert.checkIssued(cert) && cert.verify(cert.publicKey);
  } catch {
    return false;
  }
}

/**
 * The OID of Certificate.signatureAlgorithm, as hex: SEQUENCE { tbsCertificate, SEQUENCE { OID ... } ... }.
 * Node's X509Certificate does not expose it; the certificate already parsed, so the DER is sound.
 */
function signatureAlgorithmOid(der: Buffer): string | undefined {
  const outer = header(der, 0);
  if (outer === undefined || der[0] !== 0x30) return undefined;
  const tbs = header(der, outer.contentStart);
  if (tbs === undefined) return undefined;
  const algorithm = header(der, tbs.contentStart + tbs.length);
  if (algorithm === undefined || der[tbs.contentStart + tbs.length] !== 0x30) return undefined;
  const oid = header(der, algorithm.contentStart);
  if (oid === undefined || der[algorithm.contentStart] !== 0x06) return undefined;
  return der.subarray(oid.contentStart, oid.contentStart + oid.length).toString('hex');
}

function header(der: Buffer, at: number): { contentStart: number; length: number } | undefined {
  const first = der[at + 1];
  if (first === undefined) return undefined;
  if (first < 0x80) return { contentStart: at + 2, length: first };
  const count = first & 0x7f;
  if (count === 0 || count > 4) return undefined;
  let length = 0;
  for (let i = 0; i < count; i++) length = length * 256 + (der[at + 2 + i] ?? 0);
  return { contentStart: at + 2 + count, length };
}
