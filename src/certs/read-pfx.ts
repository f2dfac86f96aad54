import { type KeyObject, X509Certificate, createPrivateKey } from 'node:crypto';
import type forge from 'node-forge';
import { nodeForge } from './node-forge.js';
import { MAX_KDF_ITERATIONS, pfxIterations } from './kdf-iterations.js';
import { type KeyReadError, ReadFailure, isReadError, messageOf, readError, tooManyIterations } from './read-error.js';

/** A private key as read from a file, with the certificates a PFX carried beside it. */
export interface KeyContents {
  key: KeyObject;
  /** Certificates inside a PFX, in file order; always empty for PEM and DER keys. */
  certificates: X509Certificate[];
  /** Whether a password was needed to read it. */
  encrypted: boolean;
}

/*
 * forge opens the container (node has no PKCS#12 reader, and OpenSSL 3 refuses the RC2-40/3DES PFX
 * that Windows still exports), but forge knows only RSA: for EC keys and certificates it leaves the
 * decrypted ASN.1 in `bag.asn1`, for RSA it builds its own objects. Either way we re-encode to DER
 * and let node's crypto build the real KeyObject and X509Certificate, so EC inside a PFX works.
 *
 * forge's errors carry no codes, only messages; these patterns are the only place we read them.
 */
const MAC_FAILURE = /MAC could not be verified/i;
const PASSWORD_FAILURE = /MAC could not be verified|wrong password|Failed to decrypt/i;
const UNSUPPORTED = /unsupported|not supported|integrity mode/i;

/** Reads the first private key and every certificate of a DER PFX. Never throws. */
export function readPfx(der: Buffer, password?: string): KeyContents | KeyReadError {
  // Counted before forge derives anything: every password tried below runs the MAC's derivation.
  const iterations = pfxIterations(der);
  if (iterations > MAX_KDF_ITERATIONS) return tooManyIterations(iterations);
  // Tools write "no password" as an empty BMPString or as none at all; OpenSSL's PKCS12_parse tries
  // both, and so do we. forge's PBES2 code throws a TypeError for `undefined`, so '' goes first.
  const [first, ...others] = password === undefined ? ['', undefined] : [password];
  const opened = openPfx(der, first);
  if (!isReadError(opened)) return opened;
  if (password !== undefined && retryAsUtf8(password, opened)) {
    // The MAC's KDF wants the password as UTF-16, PBES2 (AES) as UTF-8 bytes, and forge hands one
    // string to both: fine for ASCII only. Any MAC passed above, so decrypt once more with UTF-8
    // and the MAC set aside.
    const retried = openPfx(der, nodeForge().util.encodeUtf8(password), { skipMac: true });
    if (!isReadError(retried)) return retried;
  }
  if (opened.error !== ReadFailure.WrongPassword) return opened;
  for (const candidate of others) {
    const retried = openPfx(der, candidate);
    if (!isReadError(retried)) return retried;
  }
  return password === undefined
    ? readError(ReadFailure.NeedsPassword, 'the PFX is protected by a password')
    : readError(ReadFailure.WrongPassword, 'the password does not verify the PFX or decrypt its contents');
}

/**
 * Whether a PFX that a non-ASCII password did not open may open with that password as UTF-8: its
 * MAC verified (so the password is right) and what failed came after it, the decryption. The key
 * forge derived from the wrong bytes turns the contents into garbage, which fails the padding check
 * (a wrong password) or, 1 time in 256, passes it and fails as unreadable ASN.1: both are retried.
 */
export function retryAsUtf8(password: string, failure: KeyReadError): boolean {
  return (
    /\P{ASCII}/u.test(password) &&
    !MAC_FAILURE.test(failure.detail) &&
    (failure.error === ReadFailure.WrongPassword || failure.error === ReadFailure.Unreadable)
  );
}

function openPfx(
  der: Buffer,
  password: string | undefined,
  options: { skipMac?: boolean } = {},
): KeyContents | KeyReadError {
  let asn1: forge.asn1.Asn1;
  try {
    // Parsed afresh for every password: forge rewrites parts of the ASN.1 tree while decoding.
    asn1 = nodeForge().asn1.fromDer(nodeForge().util.createBuffer(der.toString('binary')), false);
  } catch (caught) {
    return readError(ReadFailure.Unreadable, messageOf(caught));
  }
  // PFX ::= SEQUENCE { version, authSafe, macData OPTIONAL }
  const hasMac = Array.isArray(asn1.value) && asn1.value.length > 2;
  if (options.skipMac && Array.isArray(asn1.value)) asn1.value = asn1.value.slice(0, 2);
  let pfx: forge.pkcs12.Pkcs12Pfx;
  try {
    pfx = nodeForge().pkcs12.pkcs12FromAsn1(asn1, false, password);
  } catch (caught) {
    const detail = messageOf(caught);
    if (PASSWORD_FAILURE.test(detail)) return readError(ReadFailure.WrongPassword, detail);
    if (UNSUPPORTED.test(detail)) return readError(ReadFailure.Unsupported, detail);
    // Without a MAC a wrong password shows only as garbage (1 in 256 passes the padding check):
    // telling that from a damaged file is exactly what the missing MAC was for.
    return readError(hasMac ? ReadFailure.Unreadable : ReadFailure.WrongPassword, detail);
  }

  const bags = pfx.safeContents.flatMap((contents) => contents.safeBags);
  const { keyBag, pkcs8ShroudedKeyBag, certBag } = nodeForge().pki.oids;
  const keyBags = bags.filter((bag) => bag.type === keyBag || bag.type === pkcs8ShroudedKeyBag);
  const encrypted = pfx.safeContents.some((c) => c.encrypted) || bags.some((b) => b.type === pkcs8ShroudedKeyBag);

  const certificates: X509Certificate[] = [];
  for (const bag of bags.filter((b) => b.type === certBag)) {
    const asn1 = bag.cert ? nodeForge().pki.certificateToAsn1(bag.cert) : bag.asn1;
    try {
      certificates.push(new X509Certificate(toBuffer(asn1)));
    } catch (caught) {
      return readError(ReadFailure.Unreadable, `a certificate inside the PFX cannot be parsed: ${messageOf(caught)}`);
    }
  }

  const first = keyBags[0];
  if (first === undefined) return readError(ReadFailure.NoKey, 'the PFX holds no private key');
  const info = first.key ? nodeForge().pki.wrapRsaPrivateKey(nodeForge().pki.privateKeyToAsn1(first.key)) : first.asn1;
  try {
    const key = createPrivateKey({ key: toBuffer(info), format: 'der', type: 'pkcs8' });
    return { key, certificates, encrypted };
  } catch (caught) {
    return readError(ReadFailure.Unsupported, `the private key inside the PFX cannot be read: ${messageOf(caught)}`);
  }
}

function toBuffer(asn1: forge.asn1.Asn1): Buffer {
  return Buffer.from(nodeForge().asn1.toDer(asn1).getBytes(), 'binary');
}
