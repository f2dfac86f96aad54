import type forge from 'node-forge';
import { nodeForge } from './node-forge.js';

/**
 * The most key-derivation iterations mpprov runs for one PFX or encrypted key. forge derives keys
 * in pure JavaScript, about 70 000 iterations a second on a small core, so a file exported with
 * `-iter 2000000` held the validator for half a minute per password tried. OpenSSL's default is
 * 2 048 and Windows exports 2 000; 100 000 leaves room for a cautious exporter and still costs
 * only a second or two. The counts are read from the ASN.1 before any derivation runs.
 */
export const MAX_KDF_ITERATIONS = 100_000;

const PBES2 = '1.2.840.113549.1.5.13';
const DATA = '1.2.840.113549.1.7.1';
const ENCRYPTED_DATA = '1.2.840.113549.1.7.6';
const PKCS8_SHROUDED_KEY_BAG = '1.2.840.113549.1.12.10.1.2';

/**
 * The highest iteration count in a DER PFX: its MAC's and every encrypted part's (an
 * EncryptedData's and each shrouded key bag's, PBES1 or PBES2). 0 when none is found or the
 * structure cannot be read; opening the file then reports what is wrong with it. Never throws.
 */
export function pfxIterations(der: Buffer): number {
  try {
    const pfx = fromDer(binary(der));
    // PFX ::= SEQUENCE { version, authSafe ContentInfo, macData MacData OPTIONAL }
    const [, authSafe, macData] = children(pfx);
    // MacData ::= SEQUENCE { mac DigestInfo, macSalt OCTET STRING, iterations INTEGER DEFAULT 1 }
    let most = integerOf(children(macData)[2]);
    const safe = dataContent(authSafe);
    if (safe === undefined) return most;
    // AuthenticatedSafe ::= SEQUENCE OF ContentInfo, each plain data or EncryptedData
    for (const info of children(fromDer(safe))) {
      const [type, explicit] = children(info);
      const oid = oidOf(type);
      if (oid === ENCRYPTED_DATA) {
        // EncryptedData ::= SEQUENCE { version, EncryptedContentInfo { contentType, algorithm, [0] content } }
        const [, contentInfo] = children(children(explicit)[0]);
        most = Math.max(most, algorithmIterations(children(contentInfo)[1]));
      } else if (oid === DATA) {
        const bags = dataContent(info);
        if (bags === undefined) continue;
        // SafeContents ::= SEQUENCE OF SafeBag { bagId, [0] bagValue, attributes }
        for (const bag of children(fromDer(bags))) {
          const [bagId, value] = children(bag);
          if (oidOf(bagId) !== PKCS8_SHROUDED_KEY_BAG) continue;
          // EncryptedPrivateKeyInfo ::= SEQUENCE { encryptionAlgorithm, encryptedData }
          most = Math.max(most, algorithmIterations(children(children(value)[0])[0]));
        }
      }
    }
    return most;
  } catch {
    return 0;
  }
}

/** The iteration count of a DER EncryptedPrivateKeyInfo (PKCS#8); 0 when it cannot be read. Never throws. */
export function pkcs8Iterations(der: Buffer): number {
  try {
    return algorithmIterations(children(fromDer(binary(der)))[0]);
  } catch {
    return 0;
  }
}

/** "100 000": how the counts are written in messages. */
export function formatIterations(count: number): string {
  return Number.isFinite(count) ? String(count).replace(/\B(?=(\d{3})+$)/g, ' ') : 'more than 2^48';
}

/**
 * PBES1 and the PKCS#12 PBE schemes: AlgorithmIdentifier { oid, SEQUENCE { salt, iterations } };
 * PBES2: { oid, SEQUENCE { keyDerivationFunc { pbkdf2, SEQUENCE { salt, iterationCount, ... } }, encryptionScheme } }.
 */
function algorithmIterations(algorithm: forge.asn1.Asn1 | undefined): number {
  const [oid, params] = children(algorithm);
  if (oidOf(oid) === PBES2) {
    const [kdf] = children(params);
    return integerOf(children(children(kdf)[1])[1]);
  }
  return integerOf(children(params)[1]);
}

/** The bytes of a ContentInfo of type data: [0] EXPLICIT OCTET STRING, which BER may split in pieces. */
function dataContent(info: forge.asn1.Asn1 | undefined): string | undefined {
  const [type, explicit] = children(info);
  if (oidOf(type) !== DATA) return undefined;
  const octets = children(explicit)[0];
  if (octets === undefined) return undefined;
  return typeof octets.value === 'string'
    ? octets.value
    : children(octets)
        .map((part) => bytesOf(part))
        .join('');
}

/** A non-negative INTEGER's value; Infinity past 2^48, which no cap needs to tell apart. */
function integerOf(node: forge.asn1.Asn1 | undefined): number {
  if (node?.type !== nodeForge().asn1.Type.INTEGER) return 0;
  const bytes = bytesOf(node).replace(/^\0+/, '');
  if (bytes.length > 6) return Infinity;
  let value = 0;
  for (const char of bytes) value = value * 256 + char.charCodeAt(0);
  return value;
}

function oidOf(node: forge.asn1.Asn1 | undefined): string | undefined {
  return node?.type === nodeForge().asn1.Type.OID ? nodeForge().asn1.derToOid(bytesOf(node)) : undefined;
}

function children(node: forge.asn1.Asn1 | undefined): (forge.asn1.Asn1 | undefined)[] {
  return node !== undefined && Array.isArray(node.value) ? node.value : [];
}

function bytesOf(node: forge.asn1.Asn1 | undefined): string {
  return typeof node?.value === 'string' ? node.value : '';
}

function fromDer(bytes: string): forge.asn1.Asn1 {
  return nodeForge().asn1.fromDer(nodeForge().util.createBuffer(bytes), false);
}

function binary(der: Buffer): string {
  return der.toString('binary');
}
