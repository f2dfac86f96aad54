import { createPrivateKey, X509Certificate } from 'node:crypto';
import { id_data, id_signedData } from '@peculiar/asn1-cms';
import { PFX } from '@peculiar/asn1-pfx';
import { EncryptedPrivateKeyInfo } from '@peculiar/asn1-pkcs8';
import { firstObjectBytes, isSequence, octetStringValue, parseAs, readBer, sequenceLength } from './ber.js';
import { pemBlocks, type PemBlock } from './pem-blocks.js';
import { CERTIFICATE_SLOTS, type FileSlot } from './stanza.js';

/**
 * The device's check of an uploaded file (docs/device-model.md, "Requests"): certificate slots take
 * certificates, PEM or DER; key slots take private keys, PEM, DER or PFX. Judged by content,
 * never by file name, and by reading it as the device's OpenSSL would: a certificate must parse
 * as X.509 and a plain key must load (node:crypto, that is OpenSSL). An encrypted key or a PFX
 * cannot be opened without its password, which the upload does not carry, so for those the
 * structure is checked (an EncryptedPrivateKeyInfo with a password-based scheme; a PFX of
 * version 3 with its content). Written apart from the agent's own reading of credential files on
 * purpose: where the two disagree, a test of the agent against the simulator shows it.
 */

export const FileKind = {
  PemCertificate: 'pem-certificate',
  DerCertificate: 'der-certificate',
  PemPrivateKey: 'pem-private-key',
  PemEncryptedPrivateKey: 'pem-encrypted-private-key',
  DerPrivateKey: 'der-private-key',
  DerEncryptedPrivateKey: 'der-encrypted-private-key',
  Pfx: 'pfx',
} as const;
export type FileKind = (typeof FileKind)[keyof typeof FileKind];

/** What a slot holds, in the words of the 400 answer. */
export function slotTakes(slot: FileSlot): string {
  return CERTIFICATE_SLOTS.includes(slot) ? 'a certificate (PEM or DER)' : 'a private key (PEM, DER or PFX)';
}

/** The kind of the file if it fits the slot; undefined if the device refuses it there. Never throws. */
export function fileKindFor(slot: FileSlot, bytes: Uint8Array): FileKind | undefined {
  if (bytes.length === 0) return undefined;
  return CERTIFICATE_SLOTS.includes(slot) ? certificateKind(bytes) : privateKeyKind(bytes);
}

const CERTIFICATE_LABELS = new Set(['CERTIFICATE', 'X509 CERTIFICATE', 'TRUSTED CERTIFICATE']);

/** PEM: one or more certificate blocks (a chain), every one of them X.509; DER: one certificate, nothing after it. */
function certificateKind(bytes: Uint8Array): FileKind | undefined {
  const blocks = pemBlocks(bytes);
  if (blocks.length > 0) {
    const certificates = blocks.filter((b) => CERTIFICATE_LABELS.has(b.label));
    if (certificates.length === 0) return undefined;
    // A TRUSTED CERTIFICATE carries OpenSSL's trust settings after the certificate itself.
    return certificates.every((b) =>
      parsesAsCertificate(b.label === 'TRUSTED CERTIFICATE' ? firstObjectBytes(b.der) : b.der),
    )
      ? FileKind.PemCertificate
      : undefined;
  }
  return readBer(bytes) !== undefined && parsesAsCertificate(Buffer.from(bytes)) ? FileKind.DerCertificate : undefined;
}

function parsesAsCertificate(der: Buffer | undefined): boolean {
  if (der === undefined) return false;
  try {
    new X509Certificate(der);
    return true;
  } catch {
    return false;
  }
}

const PLAIN_KEY_LABELS = new Set(['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY', 'DSA PRIVATE KEY']);

/**
 * PEM: the first private key block decides (OpenSSL skips other blocks, so a file holding the
 * certificate and then its key is a key file too). DER: a plain key in any of its three forms,
 * an encrypted PKCS#8 key, or a PFX.
 */
function privateKeyKind(bytes: Uint8Array): FileKind | undefined {
  const blocks = pemBlocks(bytes);
  if (blocks.length > 0) {
    const block = blocks.find((b) => b.label === 'ENCRYPTED PRIVATE KEY' || PLAIN_KEY_LABELS.has(b.label));
    return block === undefined ? undefined : pemKeyKind(block);
  }
  if (readBer(bytes) === undefined) return undefined;
  const der = Buffer.from(bytes);
  if (loadsAsDerKey(der)) return FileKind.DerPrivateKey;
  if (isEncryptedPrivateKeyInfo(der)) return FileKind.DerEncryptedPrivateKey;
  if (isPfx(der)) return FileKind.Pfx;
  return undefined;
}

function pemKeyKind(block: PemBlock): FileKind | undefined {
  if (block.label === 'ENCRYPTED PRIVATE KEY') {
    return isEncryptedPrivateKeyInfo(block.der) ? FileKind.PemEncryptedPrivateKey : undefined;
  }
  // OpenSSL's legacy PEM encryption: the cipher and IV are in the headers, the body is ciphertext.
  if (/^4,\s*ENCRYPTED$/.test(block.headers['Proc-Type'] ?? '')) {
    return /^[A-Z0-9-]+,[0-9A-Fa-f]+$/.test(block.headers['DEK-Info'] ?? '')
      ? FileKind.PemEncryptedPrivateKey
      : undefined;
  }
  try {
    createPrivateKey({ key: block.text, format: 'pem' });
    return FileKind.PemPrivateKey;
  } catch {
    return undefined;
  }
}

function loadsAsDerKey(der: Buffer): boolean {
  for (const type of ['pkcs8', 'pkcs1', 'sec1'] as const) {
    try {
      createPrivateKey({ key: der, format: 'der', type });
      return true;
    } catch {
      // the next form
    }
  }
  return false;
}

/** PKCS#5 (PBES1, PBES2) and PKCS#12 password-based encryption schemes. */
const PASSWORD_BASED = /^1\.2\.840\.113549\.1\.(5\.\d+|12\.1\.\d+)$/;

/** EncryptedPrivateKeyInfo ::= SEQUENCE { encryptionAlgorithm AlgorithmIdentifier, encryptedData OCTET STRING } */
function isEncryptedPrivateKeyInfo(der: Uint8Array): boolean {
  // asn1-schema reads a SEQUENCE's leading items and ignores extra ones; OpenSSL refuses them.
  if (sequenceLength(der) !== 2) return false;
  const info = parseAs(der, EncryptedPrivateKeyInfo);
  return (
    info !== undefined && PASSWORD_BASED.test(info.encryptionAlgorithm.algorithm) && info.encryptedData.byteLength > 0
  );
}

/**
 * PFX ::= SEQUENCE { version INTEGER (3), authSafe ContentInfo, macData MacData OPTIONAL }, with
 * ContentInfo ::= SEQUENCE { contentType (data or signedData), content [0] EXPLICIT }. For data,
 * the content must be an OCTET STRING holding a SEQUENCE (the AuthenticatedSafe).
 */
function isPfx(der: Uint8Array): boolean {
  const items = sequenceLength(der);
  if (items !== 2 && items !== 3) return false;
  const pfx = parseAs(der, PFX);
  if (pfx === undefined || pfx.version !== 3) return false;
  const { contentType, content } = pfx.authSafe;
  if (contentType === id_signedData) return isSequence(content);
  if (contentType !== id_data) return false;
  // A BER writer may split the OCTET STRING into pieces: asn1js joins them.
  const octets = octetStringValue(content);
  return octets !== undefined && isSequence(octets);
}
