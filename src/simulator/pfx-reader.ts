import { createHmac, timingSafeEqual } from 'node:crypto';
import { ContentInfo, id_data, id_encryptedData } from '@peculiar/asn1-cms';
import {
  AuthenticatedSafe,
  CertBag,
  id_certBag,
  id_keyBag,
  id_pkcs8ShroudedKeyBag,
  id_SafeContents,
  id_x509Certificate,
  PFX,
  SafeContents,
  type MacData,
} from '@peculiar/asn1-pfx';
import { EncryptedPrivateKeyInfo } from '@peculiar/asn1-pkcs8';
import { octetStringValue, parseAs, sequenceLength } from './ber.js';
import { countOf, EncryptedData } from './password-based-params.js';
import { bmpPassword, decryptWith, hashOf, pkcs12Kdf, withinBounds, type Password } from './password-decryption.js';

/**
 * Opens a PFX (PKCS#12, RFC 7292) the way OpenSSL's PKCS12_parse does for wpa_supplicant: the MAC
 * decides whether the password is right (with no password, both "no password" and "" are tried),
 * then the key and the certificates come out of their bags. The structure is read by
 * @peculiar/asn1-pfx; the simulator's own reading, apart from the agent's, so the two can
 * disagree. Gives the key as PKCS#8 DER and the certificates as DER, for node:crypto to load.
 * Never throws.
 */

export interface PfxContents {
  /** PrivateKeyInfo DER of the first key in the file. */
  keyDer: Buffer;
  /** Certificate DERs, in file order. */
  certificates: Buffer[];
}

export type PfxFailure = 'unreadable' | 'wrong-password' | 'unsupported' | 'no-key';

interface Found {
  keys: Buffer[];
  certificates: Buffer[];
}

export function openPfx(der: Uint8Array, password: string | undefined): PfxContents | PfxFailure {
  const pfx = parseAs(der, PFX);
  if (pfx === undefined || countOf(pfx.version) !== 3) return 'unreadable';
  if (pfx.authSafe.contentType !== id_data) return 'unsupported';
  const authSafeBytes = octetStringValue(pfx.authSafe.content);
  if (authSafeBytes === undefined) return 'unreadable';

  const candidates: Password[] = password === undefined || password === '' ? [null, ''] : [password];
  // PFX's class fills an absent macData with an empty default: whether the file has one is
  // whether its SEQUENCE has a third item.
  const mac = sequenceLength(der) === 3 ? pfx.macData : undefined;
  let chosen: Password | undefined;
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

  const contents = parseAs(authSafeBytes, AuthenticatedSafe);
  if (contents === undefined) return 'unreadable';
  const found: Found = { keys: [], certificates: [] };
  for (const info of contents) {
    const failure = readContentInfo(info, chosen ?? null, found);
    if (failure !== undefined) return failure;
  }
  const keyDer = found.keys[0];
  return keyDer === undefined ? 'no-key' : { keyDer, certificates: found.certificates };
}

/** MacData ::= SEQUENCE { mac DigestInfo, macSalt OCTET STRING, iterations INTEGER DEFAULT 1 } */
function verifyMac(mac: MacData, password: Password, authSafe: Buffer): boolean | 'unsupported' {
  // PBMAC1 (RFC 9579) and other digests are not what tools write by default: refuse, do not guess.
  const hash = hashOf(mac.mac.digestAlgorithm.algorithm);
  const iterations = countOf(mac.iterations);
  if (hash === undefined || !withinBounds(iterations)) return 'unsupported';
  const expected = Buffer.from(mac.mac.digest.buffer);
  const key = pkcs12Kdf(hash, bmpPassword(password), Buffer.from(mac.macSalt.buffer), 3, iterations, hash.size);
  const actual = createHmac(hash.name, key).update(authSafe).digest();
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** ContentInfo ::= SEQUENCE { contentType, content [0] EXPLICIT }: plain data or encryptedData. */
function readContentInfo(info: ContentInfo, password: Password, found: Found): PfxFailure | undefined {
  let safeContents: Buffer | undefined;
  if (info.contentType === id_data) {
    safeContents = octetStringValue(info.content);
  } else if (info.contentType === id_encryptedData) {
    const encrypted = parseAs(info.content, EncryptedData)?.encryptedContentInfo;
    const ciphertext = encryptedContent(encrypted?.encryptedContent);
    if (encrypted === undefined || ciphertext === undefined) return 'unreadable';
    const plain = decryptWith(encrypted.contentEncryptionAlgorithm, password, ciphertext);
    if (typeof plain === 'string') return plain;
    safeContents = plain;
  } else {
    return 'unsupported';
  }
  if (safeContents === undefined) return 'unreadable';
  return readSafeContents(safeContents, password, found, 0);
}

/** `[0] IMPLICIT OCTET STRING`, whole or (BER) in pieces. */
function encryptedContent(
  content: { value?: { buffer: ArrayBuffer }; constructedValue?: { buffer: ArrayBuffer }[] } | undefined,
): Buffer | undefined {
  if (content?.value !== undefined) return Buffer.from(content.value.buffer);
  if (content?.constructedValue !== undefined)
    return Buffer.concat(content.constructedValue.map((piece) => Buffer.from(piece.buffer)));
  return undefined;
}

/** SafeContents ::= SEQUENCE OF SafeBag { bagId, bagValue [0] EXPLICIT, bagAttributes SET OPTIONAL } */
function readSafeContents(bytes: Uint8Array, password: Password, found: Found, depth: number): PfxFailure | undefined {
  const bags = parseAs(bytes, SafeContents);
  // A wrong password without a MAC decrypts to garbage that may pass the padding check.
  if (bags === undefined || depth > 4) return 'wrong-password';
  for (const bag of bags) {
    if (bag.bagId === id_keyBag) {
      found.keys.push(Buffer.from(bag.bagValue));
    } else if (bag.bagId === id_pkcs8ShroudedKeyBag) {
      const shrouded = parseAs(bag.bagValue, EncryptedPrivateKeyInfo);
      if (shrouded === undefined) return 'unreadable';
      const plain = decryptWith(shrouded.encryptionAlgorithm, password, Buffer.from(shrouded.encryptedData.buffer));
      if (typeof plain === 'string') return plain;
      found.keys.push(plain);
    } else if (bag.bagId === id_certBag) {
      const certificate = parseAs(bag.bagValue, CertBag);
      if (certificate === undefined) return 'unreadable';
      if (certificate.certId !== id_x509Certificate) continue;
      const certificateDer = octetStringValue(certificate.certValue);
      if (certificateDer === undefined) return 'unreadable';
      found.certificates.push(certificateDer);
    } else if (bag.bagId === id_SafeContents) {
      const failure = readSafeContents(new Uint8Array(bag.bagValue), password, found, depth + 1);
      if (failure !== undefined) return failure;
    }
    // CRL bags, secret bags and unknown bags carry nothing the supplicant uses.
  }
  return undefined;
}
