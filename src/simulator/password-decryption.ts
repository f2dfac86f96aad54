import { createDecipheriv, createHash, pbkdf2Sync } from 'node:crypto';
import type { AlgorithmIdentifier } from '@peculiar/asn1-x509';
import { octetStringValue, parseAs } from './ber.js';
import { countOf, Pbes2Params, Pbkdf2Params, Pkcs12PbeParams } from './password-based-params.js';
import { rc2CbcDecryptRaw } from './rc2.js';

/**
 * Password-based decryption as a PFX uses it: PBES2 (PBKDF2 with AES or 3DES, what OpenSSL 3
 * writes) and the PKCS#12 schemes of RFC 7292 appendix C (3DES and RC2, what `-legacy` and many
 * Windows exports write), plus the PKCS#12 key derivation the MAC needs. A password is given as a
 * JavaScript string, or null for "no password at all" (which PKCS#12 tells from "").
 *
 * The parameters are read by asn1-schema (password-based-params.ts); the ciphers and PBKDF2 are
 * node:crypto's, synchronously, as the device's OpenSSL would run them. Not WebCrypto: it has no
 * 3DES, no PBKDF2 with SHA-224, and only asynchronous calls, while the file check and the
 * supplicant model that open a PFX are synchronous. Two parts stay hand-written because no
 * maintained library offers them synchronously: the PKCS#12 key derivation (RFC 7292 appendix B;
 * WebCrypto has none) and RC2 (rc2.ts).
 */

export type Password = string | null;

/** Why decryption did not give plaintext. */
export type DecryptFailure = 'wrong-password' | 'unsupported';

const HASHES: Record<string, { name: string; block: number; size: number }> = {
  '1.3.14.3.2.26': { name: 'sha1', block: 64, size: 20 },
  '2.16.840.1.101.3.4.2.4': { name: 'sha224', block: 64, size: 28 },
  '2.16.840.1.101.3.4.2.1': { name: 'sha256', block: 64, size: 32 },
  '2.16.840.1.101.3.4.2.2': { name: 'sha384', block: 128, size: 48 },
  '2.16.840.1.101.3.4.2.3': { name: 'sha512', block: 128, size: 64 },
};

/** A digest by its OID, for the PFX MAC. */
export function hashOf(oid: string | undefined): { name: string; block: number; size: number } | undefined {
  return oid === undefined ? undefined : HASHES[oid];
}

/** The password as PKCS#12 feeds it to its KDF: UTF-16BE with two zero bytes; nothing for null. */
export function bmpPassword(password: Password): Buffer {
  if (password === null) return Buffer.alloc(0);
  const utf16 = Buffer.from(`${password}\0`, 'utf16le');
  return utf16.swap16();
}

/** RFC 7292 appendix B.2: `id` 1 derives keys, 2 IVs, 3 MAC keys. */
export function pkcs12Kdf(
  hash: { name: string; block: number; size: number },
  password: Buffer,
  salt: Buffer,
  id: 1 | 2 | 3,
  iterations: number,
  length: number,
): Buffer {
  const v = hash.block;
  const fill = (source: Buffer): Buffer => {
    if (source.length === 0) return Buffer.alloc(0);
    const out = Buffer.alloc(v * Math.ceil(source.length / v));
    for (let i = 0; i < out.length; i++) out[i] = source[i % source.length] ?? 0;
    return out;
  };
  const d = Buffer.alloc(v, id);
  const i = Buffer.concat([fill(salt), fill(password)]);
  const blocks: Buffer[] = [];
  for (let produced = 0; produced < length; produced += hash.size) {
    let a = createHash(hash.name).update(d).update(i).digest();
    for (let n = 1; n < iterations; n++) a = createHash(hash.name).update(a).digest();
    blocks.push(a);
    const b = fill(a);
    // I_j = (I_j + B + 1) mod 2^(8v), for each v-byte block of I.
    for (let at = 0; at < i.length; at += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const sum = (i[at + k] ?? 0) + (b[k] ?? 0) + carry;
        i[at + k] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
  return Buffer.concat(blocks).subarray(0, length);
}

const PKCS12_PBE: Record<string, { cipher: 'des-ede3-cbc' | 'rc2'; keyLength: number; effectiveBits?: number }> = {
  '1.2.840.113549.1.12.1.3': { cipher: 'des-ede3-cbc', keyLength: 24 },
  '1.2.840.113549.1.12.1.5': { cipher: 'rc2', keyLength: 16, effectiveBits: 128 },
  '1.2.840.113549.1.12.1.6': { cipher: 'rc2', keyLength: 5, effectiveBits: 40 },
};

const PBES2 = '1.2.840.113549.1.5.13';
const PBKDF2 = '1.2.840.113549.1.5.12';
const PRFS: Record<string, string> = {
  '1.2.840.113549.2.7': 'sha1',
  '1.2.840.113549.2.8': 'sha224',
  '1.2.840.113549.2.9': 'sha256',
  '1.2.840.113549.2.10': 'sha384',
  '1.2.840.113549.2.11': 'sha512',
};
const CBC_CIPHERS: Record<string, { name: string; keyLength: number }> = {
  '2.16.840.1.101.3.4.1.2': { name: 'aes-128-cbc', keyLength: 16 },
  '2.16.840.1.101.3.4.1.22': { name: 'aes-192-cbc', keyLength: 24 },
  '2.16.840.1.101.3.4.1.42': { name: 'aes-256-cbc', keyLength: 32 },
  '1.2.840.113549.3.7': { name: 'des-ede3-cbc', keyLength: 24 },
};

/**
 * Bounds an iteration count from a file, so a hostile upload cannot hold the device for minutes
 * when it authenticates: well above what tools write (OpenSSL and Windows: 2048 or 2000).
 */
const MAX_ITERATIONS = 1_000_000;

/** Decrypts `data` with the scheme an AlgorithmIdentifier names. Never throws. */
export function decryptWith(algorithm: AlgorithmIdentifier, password: Password, data: Buffer): Buffer | DecryptFailure {
  try {
    if (algorithm.algorithm === PBES2) return pbes2(algorithm.parameters, password, data);
    const pbe = PKCS12_PBE[algorithm.algorithm];
    const params = pbe === undefined ? undefined : parametersAs(algorithm.parameters, Pkcs12PbeParams);
    const iterations = countOf(params?.iterations);
    if (pbe === undefined || params === undefined || !withinBounds(iterations)) return 'unsupported';
    const salt = Buffer.from(params.salt.buffer);
    const sha1 = { name: 'sha1', block: 64, size: 20 };
    const pass = bmpPassword(password);
    const key = pkcs12Kdf(sha1, pass, salt, 1, iterations, pbe.keyLength);
    const iv = pkcs12Kdf(sha1, pass, salt, 2, iterations, 8);
    if (pbe.cipher === 'rc2') return unpad(rc2CbcDecryptRaw(key, pbe.effectiveBits ?? 128, iv, data), 8);
    return cbc(pbe.cipher, key, iv, data);
  } catch {
    return 'unsupported';
  }
}

/** PBES2 (RFC 8018 6.2) with PBKDF2 and a CBC cipher whose parameters are its IV. */
function pbes2(parameters: ArrayBuffer | null | undefined, password: Password, data: Buffer): Buffer | DecryptFailure {
  const params = parametersAs(parameters, Pbes2Params);
  if (params?.keyDerivationFunc.algorithm !== PBKDF2) return 'unsupported';
  const kdf = parametersAs(params.keyDerivationFunc.parameters, Pbkdf2Params);
  const iterations = countOf(kdf?.iterationCount);
  const keyLength = countOf(kdf?.keyLength);
  // An absent prf is the DEFAULT, hmacWithSHA1.
  const prf = kdf?.prf === undefined ? 'sha1' : PRFS[kdf.prf.algorithm];
  const cipher = CBC_CIPHERS[params.encryptionScheme.algorithm];
  const iv = params.encryptionScheme.parameters ? octetStringValue(params.encryptionScheme.parameters) : undefined;
  if (kdf === undefined || !withinBounds(iterations) || prf === undefined) return 'unsupported';
  if (cipher === undefined || iv === undefined) return 'unsupported';
  const salt = Buffer.from(kdf.salt.buffer);
  const key = pbkdf2Sync(Buffer.from(password ?? '', 'utf8'), salt, iterations, keyLength ?? cipher.keyLength, prf);
  return cbc(cipher.name, key, iv, data);
}

function parametersAs<T>(parameters: ArrayBuffer | null | undefined, type: new () => T): T | undefined {
  return parameters ? parseAs(parameters, type) : undefined;
}

/** An iteration count a tool could have written, within MAX_ITERATIONS. */
export function withinBounds(iterations: number | undefined): iterations is number {
  return iterations !== undefined && iterations >= 1 && iterations <= MAX_ITERATIONS;
}

function cbc(name: string, key: Buffer, iv: Buffer, data: Buffer): Buffer | DecryptFailure {
  let decipher;
  try {
    decipher = createDecipheriv(name, key, iv);
  } catch {
    return 'unsupported';
  }
  try {
    return Buffer.concat([decipher.update(data), decipher.final()]);
  } catch {
    // Bad padding after decryption: the key, so the password, is wrong.
    return 'wrong-password';
  }
}

/** PKCS#7 padding, checked as OpenSSL checks it. */
function unpad(plain: Buffer, block: number): Buffer | DecryptFailure {
  const n = plain[plain.length - 1] ?? 0;
  if (n < 1 || n > block || n > plain.length) return 'wrong-password';
  for (let i = plain.length - n; i < plain.length; i++) if (plain[i] !== n) return 'wrong-password';
  return plain.subarray(0, plain.length - n);
}
