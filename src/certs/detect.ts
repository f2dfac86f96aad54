import type forge from 'node-forge';
import { nodeForge } from './node-forge.js';

/**
 * What a credential file holds, judged by content, never by file name: a technician's
 * `mp01.crt` may well be a DER key, and the device sniffs content too.
 */
export const CredentialKind = {
  PemCertificate: 'pem-certificate',
  DerCertificate: 'der-certificate',
  PemPrivateKey: 'pem-private-key',
  PemEncryptedPrivateKey: 'pem-encrypted-private-key',
  DerPrivateKey: 'der-private-key',
  DerEncryptedPrivateKey: 'der-encrypted-private-key',
  Pfx: 'pfx',
  // Named so a wrong file gets a precise sentence: a CSR or a public key is a common mix-up.
  CertificateRequest: 'certificate-request',
  PublicKey: 'public-key',
  Unknown: 'unknown',
} as const;
export type CredentialKind = (typeof CredentialKind)[keyof typeof CredentialKind];

export function isCertificateKind(kind: CredentialKind): boolean {
  return kind === CredentialKind.PemCertificate || kind === CredentialKind.DerCertificate;
}

export function isPrivateKeyKind(kind: CredentialKind): boolean {
  return (
    kind === CredentialKind.PemPrivateKey ||
    kind === CredentialKind.PemEncryptedPrivateKey ||
    kind === CredentialKind.DerPrivateKey ||
    kind === CredentialKind.DerEncryptedPrivateKey ||
    kind === CredentialKind.Pfx
  );
}

const PEM_LABEL = /-----BEGIN ([A-Z0-9 ]+)-----/g;

/** Detects the kind of a certificate or key file from its bytes. Never throws. */
export function detectCredentialKind(bytes: Uint8Array): CredentialKind {
  const head = Buffer.from(bytes.subarray(0, Math.min(bytes.length, 64 * 1024))).toString('latin1');
  // `openssl ecparam -genkey` writes an EC PARAMETERS block before the key: skip such blocks.
  const labels = [...head.matchAll(PEM_LABEL)].map((m) => m[1] ?? '').filter((l) => l !== 'EC PARAMETERS');
  const first = labels[0];
  if (first !== undefined) return kindOfPemLabel(first, head);
  return kindOfDer(bytes);
}

function kindOfPemLabel(label: string, text: string): CredentialKind {
  switch (label) {
    case 'CERTIFICATE':
    case 'X509 CERTIFICATE':
    case 'TRUSTED CERTIFICATE':
      return CredentialKind.PemCertificate;
    case 'ENCRYPTED PRIVATE KEY':
      return CredentialKind.PemEncryptedPrivateKey;
    case 'PRIVATE KEY':
      return CredentialKind.PemPrivateKey;
    case 'RSA PRIVATE KEY':
    case 'EC PRIVATE KEY':
      // Traditional (OpenSSL legacy) PEM encryption is marked by a Proc-Type header.
      return /Proc-Type:\s*4,ENCRYPTED/.test(text)
        ? CredentialKind.PemEncryptedPrivateKey
        : CredentialKind.PemPrivateKey;
    case 'PKCS12':
      return CredentialKind.Pfx;
    case 'CERTIFICATE REQUEST':
    case 'NEW CERTIFICATE REQUEST':
      return CredentialKind.CertificateRequest;
    case 'PUBLIC KEY':
    case 'RSA PUBLIC KEY':
      return CredentialKind.PublicKey;
    default:
      return CredentialKind.Unknown;
  }
}

/** DER files are told apart by the shape of their outer ASN.1 SEQUENCE. */
function kindOfDer(bytes: Uint8Array): CredentialKind {
  if (bytes.length < 16 || bytes[0] !== 0x30) return CredentialKind.Unknown;
  let root: forge.asn1.Asn1;
  try {
    // @types/node-forge only knows the old boolean `strict` argument; forge itself takes options.
    const options = { strict: true, parseAllBytes: true, decodeBitStrings: false } as unknown as boolean;
    root = nodeForge().asn1.fromDer(nodeForge().util.createBuffer(Buffer.from(bytes).toString('binary')), options);
  } catch {
    return CredentialKind.Unknown;
  }
  const items = Array.isArray(root.value) ? root.value : [];
  const tags = items.map((item) => item.type);
  const T = nodeForge().asn1.Type;
  const firstInt = items[0]?.type === T.INTEGER ? intValue(items[0]) : undefined;

  // Certificate: SEQUENCE { tbsCertificate SEQUENCE, signatureAlgorithm SEQUENCE, signature BIT STRING }.
  // A PKCS#10 request has the same outer shape; its inner SEQUENCE has 4 items, a tbsCertificate 6-10.
  if (items.length === 3 && tags[0] === T.SEQUENCE && tags[1] === T.SEQUENCE && tags[2] === T.BITSTRING) {
    const inner = items[0]?.value;
    return Array.isArray(inner) && inner.length === 4 && inner[0]?.type === T.INTEGER
      ? CredentialKind.CertificateRequest
      : CredentialKind.DerCertificate;
  }
  // SubjectPublicKeyInfo: SEQUENCE { algorithm SEQUENCE, subjectPublicKey BIT STRING }
  if (items.length === 2 && tags[0] === T.SEQUENCE && tags[1] === T.BITSTRING) return CredentialKind.PublicKey;
  // PFX: SEQUENCE { version INTEGER (3), authSafe ContentInfo, macData? }
  if (firstInt === 3 && tags[1] === T.SEQUENCE) return CredentialKind.Pfx;
  // EncryptedPrivateKeyInfo: SEQUENCE { encryptionAlgorithm SEQUENCE, encryptedData OCTET STRING }
  if (items.length === 2 && tags[0] === T.SEQUENCE && tags[1] === T.OCTETSTRING) {
    return CredentialKind.DerEncryptedPrivateKey;
  }
  // PKCS#8: { 0|1, AlgorithmIdentifier, OCTET STRING }; PKCS#1 RSA: { 0, n, e, ... };
  // SEC1 EC: { 1, OCTET STRING, ... }.
  if (firstInt === 0 && tags[1] === T.SEQUENCE && tags[2] === T.OCTETSTRING) return CredentialKind.DerPrivateKey;
  if (firstInt === 1 && tags[1] === T.SEQUENCE && tags[2] === T.OCTETSTRING) return CredentialKind.DerPrivateKey;
  if (firstInt === 0 && items.length >= 9 && tags.every((t) => t === T.INTEGER)) return CredentialKind.DerPrivateKey;
  if (firstInt === 1 && tags[1] === T.OCTETSTRING) return CredentialKind.DerPrivateKey;
  return CredentialKind.Unknown;
}

function intValue(node: forge.asn1.Asn1): number | undefined {
  if (typeof node.value !== 'string' || node.value.length > 4) return undefined;
  let n = 0;
  for (let i = 0; i < node.value.length; i++) n = n * 256 + node.value.charCodeAt(i);
  return n;
}

/**
 * For a file that starts like DER but holds fewer bytes than its outer header declares, the two
 * lengths; undefined otherwise. Lets a check say "truncated" instead of "not a certificate".
 */
export function derTruncation(bytes: Uint8Array): { declared: number; actual: number } | undefined {
  if (bytes.length < 2 || bytes[0] !== 0x30) return undefined;
  const first = bytes[1] ?? 0;
  let length = first;
  let header = 2;
  if (first & 0x80) {
    const count = first & 0x7f;
    // Indefinite length (0x80) or lengths beyond 4 bytes are not what a truncated copy looks like.
    if (count === 0 || count > 4 || bytes.length < 2 + count) return undefined;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[2 + i] ?? 0);
    header = 2 + count;
  }
  const declared = header + length;
  return declared > bytes.length ? { declared, actual: bytes.length } : undefined;
}
