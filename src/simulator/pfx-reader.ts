import { createHmac, timingSafeEqual } from 'node:crypto';
import { isContext, octetsOf, oidOf, readDer, sequenceItems, smallIntegerOf, type DerNode } from './der-reader.js';
import { bmpPassword, decryptWith, hashOf, MAX_ITERATIONS, pkcs12Kdf, type Password } from './password-decryption.js';

/**
 * Opens a PFX (PKCS#12, RFC 7292) the way OpenSSL's PKCS12_parse does for wpa_supplicant: the MAC
 * decides whether the password is right (with no password, both "no password" and "" are tried),
 * then the key and the certificates come out of their bags. Gives the key as PKCS#8 DER and the
 * certificates as DER, for node:crypto to load. Never throws.
 */

export interface PfxContents {
  /** PrivateKeyInfo DER of the first key in the file. */
  keyDer: Buffer;
  /** Certificate DERs, in file order. */
  certificates: Buffer[];
}

export type PfxFailure = 'unreadable' | 'wrong-password' | 'unsupported' | 'no-key';

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  keyBag: '1.2.840.113549.1.12.10.1.1',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  safeContentsBag: '1.2.840.113549.1.12.10.1.6',
  x509Certificate: '1.2.840.113549.1.9.22.1',
} as const;

export function openPfx(der: Uint8Array, password: string | undefined): PfxContents | PfxFailure {
  const root = sequenceItems(readDer(der));
  if (root === undefined || smallIntegerOf(root[0]) !== 3) return 'unreadable';
  const authSafe = sequenceItems(root[1]);
  if (oidOf(authSafe?.[0]) !== OID.data) return 'unsupported';
  const content = authSafe?.[1];
  const authSafeBytes = isContext(content, 0) ? octetsOf(content.children[0]) : undefined;
  if (authSafeBytes === undefined) return 'unreadable';

  const candidates: Password[] = password === undefined || password === '' ? [null, ''] : [password];
  let chosen: Password | undefined;
  const mac = root[2];
  if (mac === undefined) {
    chosen = candidates[0];
  } else {
    for (const candidate of candidates) {
      const verdict = verifyMac(mac, candidate, authSafeBytes);
      if (verdict === 'unsupported') return 'unsupported';
      if (verdict) {
        chosen = candidate;
        break;
      }
    }
    if (chosen === undefined) return 'wrong-password';
  }

  const contents = sequenceItems(readDer(authSafeBytes));
  if (contents === undefined) return 'unreadable';
  const found: { keys: Buffer[]; certificates: Buffer[] } = { keys: [], certificates: [] };
  for (const info of contents) {
    const failure = readContentInfo(info, chosen ?? null, found);
    if (failure !== undefined) return failure;
  }
  const keyDer = found.keys[0];
  return keyDer === undefined ? 'no-key' : { keyDer, certificates: found.certificates };
}

/** MacData ::= SEQUENCE { mac DigestInfo, macSalt OCTET STRING, iterations INTEGER DEFAULT 1 } */
function verifyMac(node: DerNode, password: Password, authSafe: Buffer): boolean | 'unsupported' {
  const items = sequenceItems(node);
  const digestInfo = sequenceItems(items?.[0]);
  // PBMAC1 (RFC 9579) and other digests are not what tools write by default: refuse, do not guess.
  const hash = hashOf(oidOf(sequenceItems(digestInfo?.[0])?.[0]));
  const expected = octetsOf(digestInfo?.[1]);
  const salt = octetsOf(items?.[1]);
  const iterations = items?.[2] === undefined ? 1 : smallIntegerOf(items[2]);
  if (
    hash === undefined ||
    expected === undefined ||
    salt === undefined ||
    iterations === undefined ||
    iterations < 1 ||
    iterations > MAX_ITERATIONS
  ) {
    return 'unsupported';
  }
  const key = pkcs12Kdf(hash, bmpPassword(password), salt, 3, iterations, hash.size);
  const actual = createHmac(hash.name, key).update(authSafe).digest();
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** ContentInfo ::= SEQUENCE { contentType, content [0] EXPLICIT }: plain data or encryptedData. */
function readContentInfo(
  node: DerNode,
  password: Password,
  found: { keys: Buffer[]; certificates: Buffer[] },
): PfxFailure | undefined {
  const items = sequenceItems(node);
  const type = oidOf(items?.[0]);
  const content = items?.[1];
  if (!isContext(content, 0)) return 'unreadable';
  let safeContents: Buffer | undefined;
  if (type === OID.data) {
    safeContents = octetsOf(content.children[0]);
  } else if (type === OID.encryptedData) {
    // EncryptedData ::= SEQUENCE { version, EncryptedContentInfo ::= SEQUENCE { type, algorithm, [0] IMPLICIT OCTET STRING } }
    const encryptedInfo = sequenceItems(sequenceItems(content.children[0])?.[1]);
    const ciphertext = isContext(encryptedInfo?.[2], 0) ? octetsOf(encryptedInfo?.[2], true) : undefined;
    if (ciphertext === undefined) return 'unreadable';
    const plain = decryptWith(encryptedInfo?.[1], password, ciphertext);
    if (typeof plain === 'string') return plain;
    safeContents = plain;
  } else {
    return 'unsupported';
  }
  if (safeContents === undefined) return 'unreadable';
  return readSafeContents(safeContents, password, found, 0);
}

/** SafeContents ::= SEQUENCE OF SafeBag { bagId, bagValue [0] EXPLICIT, bagAttributes SET OPTIONAL } */
function readSafeContents(
  bytes: Buffer,
  password: Password,
  found: { keys: Buffer[]; certificates: Buffer[] },
  depth: number,
): PfxFailure | undefined {
  const bags = sequenceItems(readDer(bytes));
  // A wrong password without a MAC decrypts to garbage that may pass the padding check.
  if (bags === undefined || depth > 4) return 'wrong-password';
  for (const bag of bags) {
    const items = sequenceItems(bag);
    const type = oidOf(items?.[0]);
    const holder = items?.[1];
    const value = isContext(holder, 0) ? holder.children[0] : undefined;
    if (value === undefined) return 'unreadable';
    if (type === OID.keyBag) {
      found.keys.push(value.encoding);
    } else if (type === OID.shroudedKeyBag) {
      // EncryptedPrivateKeyInfo ::= SEQUENCE { encryptionAlgorithm, encryptedData OCTET STRING }
      const parts = sequenceItems(value);
      const ciphertext = octetsOf(parts?.[1]);
      if (ciphertext === undefined) return 'unreadable';
      const plain = decryptWith(parts?.[0], password, ciphertext);
      if (typeof plain === 'string') return plain;
      found.keys.push(plain);
    } else if (type === OID.certBag) {
      const cert = sequenceItems(value);
      const certValue = cert?.[1];
      if (oidOf(cert?.[0]) !== OID.x509Certificate) continue;
      const certDer = isContext(certValue, 0) ? octetsOf(certValue.children[0]) : undefined;
      if (certDer === undefined) return 'unreadable';
      found.certificates.push(certDer);
    } else if (type === OID.safeContentsBag) {
      const failure = readSafeContents(value.encoding, password, found, depth + 1);
      if (failure !== undefined) return failure;
    }
    // CRL bags, secret bags and unknown bags carry nothing the supplicant uses.
  }
  return undefined;
}
