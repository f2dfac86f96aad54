import { type KeyObject, createDecipheriv, createHash, createPrivateKey, getCipherInfo } from 'node:crypto';
import type forge from 'node-forge';
import { nodeForge } from './node-forge.js';
import { CredentialKind, detectCredentialKind } from './detect.js';
import { type PemBlock, pemBlocks } from './pem-blocks.js';
import { type KeyContents, readPfx } from './read-pfx.js';
import { MAX_KDF_ITERATIONS, pkcs8Iterations } from './kdf-iterations.js';
import { type KeyReadError, ReadFailure, isReadError, messageOf, readError, tooManyIterations } from './read-error.js';

const KEY_LABELS = new Set(['PRIVATE KEY', 'ENCRYPTED PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY']);

/**
 * Reads a private key: PEM (PKCS#1, PKCS#8, SEC1; encrypted PKCS#8 or traditional "Proc-Type"
 * encryption), DER (plain or encrypted PKCS#8, PKCS#1, SEC1) or PFX (AES or legacy RC2/3DES).
 * A password given for an unencrypted key is ignored. Never throws.
 */
export function readPrivateKey(bytes: Uint8Array, password?: string): KeyContents | KeyReadError {
  if (bytes.length === 0) return readError(ReadFailure.Unreadable, 'the file is empty');
  const kind = detectCredentialKind(bytes);
  const plain = (key: KeyObject | KeyReadError): KeyContents | KeyReadError =>
    isReadError(key)
      ? key
      : {
          key,
          certificates: [],
          encrypted: kind === CredentialKind.PemEncryptedPrivateKey || kind === CredentialKind.DerEncryptedPrivateKey,
        };

  switch (kind) {
    case CredentialKind.Pfx: {
      const block = pemBlocks(bytes).find((b) => b.label === 'PKCS12');
      return readPfx(block?.der ?? Buffer.from(bytes), password);
    }
    case CredentialKind.DerPrivateKey:
      return plain(readPlainDer(Buffer.from(bytes)));
    case CredentialKind.DerEncryptedPrivateKey:
      return plain(password === undefined ? needsPassword() : decryptPkcs8(Buffer.from(bytes), password));
    case CredentialKind.PemPrivateKey:
    case CredentialKind.PemEncryptedPrivateKey: {
      const block = pemBlocks(bytes).find((b) => KEY_LABELS.has(b.label));
      if (block === undefined) return readError(ReadFailure.Unreadable, 'the PEM data holds no complete key block');
      return plain(readPemBlock(block, password));
    }
    default:
      return readError(ReadFailure.Unreadable, `the file holds no private key (found: ${kind})`);
  }
}

function readPemBlock(block: PemBlock, password: string | undefined): KeyObject | KeyReadError {
  const traditional = /Proc-Type:\s*4,ENCRYPTED/.test(block.text);
  if (block.label !== 'ENCRYPTED PRIVATE KEY' && !traditional) {
    try {
      return createPrivateKey({ key: block.text, format: 'pem' });
    } catch (caught) {
      return readError(ReadFailure.Unreadable, `the key cannot be parsed: ${messageOf(caught)}`);
    }
  }
  // Decide here rather than let OpenSSL ask: without a passphrase it fails with a generic
  // "interrupted or cancelled", not with ERR_MISSING_PASSPHRASE.
  if (password === undefined) return needsPassword();
  return traditional ? decryptTraditional(block, password) : decryptPkcs8(block.der, password);
}

/** PKCS#8, PKCS#1 and SEC1 share no marker node reads, so each is tried in turn. */
function readPlainDer(der: Buffer): KeyObject | KeyReadError {
  let last: unknown;
  for (const type of ['pkcs8', 'pkcs1', 'sec1'] as const) {
    try {
      return createPrivateKey({ key: der, format: 'der', type });
    } catch (caught) {
      last = caught;
    }
  }
  return readError(ReadFailure.Unreadable, `the DER key cannot be parsed: ${messageOf(last)}`);
}

/*
 * OpenSSL reports a wrong password as BAD_DECRYPT, except when the garbage happens to end in valid
 * padding (about 1 in 256) and it reports the decoder's "unsupported" instead, the same code a
 * legacy cipher (PBES1 with RC2 or DES, refused without OpenSSL's legacy provider) gets. forge
 * settles it: it has those legacy schemes, and picking the cipher is separate from decrypting, so
 * an unknown scheme is told apart from a bad password without reading any error message.
 */
function decryptPkcs8(der: Buffer, password: string): KeyObject | KeyReadError {
  // Counted before either derivation below runs: forge's fallback is pure JavaScript.
  const iterations = pkcs8Iterations(der);
  if (iterations > MAX_KDF_ITERATIONS) return tooManyIterations(iterations);
  try {
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8', passphrase: password });
  } catch {
    // fall through to forge
  }
  let cipher: ForgeCipher;
  let encryptedData: string;
  try {
    const encrypted = nodeForge().asn1.fromDer(nodeForge().util.createBuffer(der.toString('binary')));
    const [algorithm, data] = asn1Children(encrypted);
    const [oid, params] = asn1Children(algorithm);
    const oidText = nodeForge().asn1.derToOid(asn1Bytes(oid));
    // PBKDF2 (PBES2) takes the password as bytes; the PKCS#12 KDF (PBES1) as UTF-16 code units.
    const secret = oidText === nodeForge().pki.oids['pkcs5PBES2'] ? nodeForge().util.encodeUtf8(password) : password;
    cipher = pbe().getCipher(oidText, params as forge.asn1.Asn1, secret);
    encryptedData = asn1Bytes(data);
  } catch (caught) {
    return readError(ReadFailure.Unsupported, `the key's encryption cannot be read: ${messageOf(caught)}`);
  }
  cipher.update(nodeForge().util.createBuffer(encryptedData));
  if (!cipher.finish()) return wrongPassword();
  try {
    return createPrivateKey({ key: Buffer.from(cipher.output.getBytes(), 'binary'), format: 'der', type: 'pkcs8' });
  } catch {
    return wrongPassword(); // decrypted to garbage that merely had valid padding
  }
}

/** forge's PBE cipher factory; @types/node-forge does not declare it. */
interface ForgeCipher {
  update(data: forge.util.ByteBuffer): void;
  finish(): boolean;
  output: forge.util.ByteBuffer;
}
const pbe = () =>
  (
    nodeForge().pki as unknown as {
      pbe: { getCipher(oid: string, params: forge.asn1.Asn1, password: string): ForgeCipher };
    }
  ).pbe;

function asn1Children(node: forge.asn1.Asn1 | undefined): (forge.asn1.Asn1 | undefined)[] {
  return node !== undefined && Array.isArray(node.value) ? node.value : [];
}

/** A primitive node's bytes as forge's binary string; '' for a missing or constructed node, which then fails as an unknown OID or empty data. */
function asn1Bytes(node: forge.asn1.Asn1 | undefined): string {
  return typeof node?.value === 'string' ? node.value : '';
}

/**
 * Traditional OpenSSL PEM encryption (Proc-Type/DEK-Info headers), decrypted by hand: the key is
 * EVP_BytesToKey(MD5, one round, salt = first 8 IV bytes). Doing it ourselves tells a wrong
 * password (bad padding or bad DER) from a cipher this OpenSSL refuses (createDecipheriv throws).
 */
function decryptTraditional(block: PemBlock, password: string): KeyObject | KeyReadError {
  const dekInfo = /DEK-Info:\s*([A-Za-z0-9-]+)\s*,\s*([0-9A-Fa-f]+)/.exec(block.text);
  const cipherName = dekInfo?.[1]?.toLowerCase() ?? '';
  const iv = Buffer.from(dekInfo?.[2] ?? '', 'hex');
  const info = getCipherInfo(cipherName);
  if (dekInfo === null || info === undefined || iv.length < 8) {
    return readError(
      ReadFailure.Unsupported,
      `the key is encrypted with an unknown cipher (${cipherName || 'none named'})`,
    );
  }
  const key = bytesToKey(Buffer.from(password, 'utf8'), iv.subarray(0, 8), info.keyLength);
  let plainDer: Buffer;
  try {
    const decipher = createDecipheriv(cipherName, key, iv);
    plainDer = Buffer.concat([decipher.update(block.der), decipher.final()]);
  } catch (caught) {
    if (errorCode(caught) === 'ERR_OSSL_BAD_DECRYPT') return wrongPassword();
    return readError(ReadFailure.Unsupported, `the key's cipher ${cipherName} cannot be used: ${messageOf(caught)}`);
  }
  try {
    const type = block.label === 'EC PRIVATE KEY' ? 'sec1' : 'pkcs1';
    return createPrivateKey({ key: plainDer, format: 'der', type });
  } catch {
    return wrongPassword();
  }
}

function bytesToKey(password: Buffer, salt: Buffer, length: number): Buffer {
  const parts: Buffer[] = [];
  let previous = Buffer.alloc(0);
  while (Buffer.concat(parts).length < length) {
    previous = createHash('md5')
      .update(Buffer.concat([previous, password, salt]))
      .digest();
    parts.push(previous);
  }
  return Buffer.concat(parts).subarray(0, length);
}

function errorCode(caught: unknown): string | undefined {
  return typeof caught === 'object' && caught !== null && 'code' in caught ? String(caught.code) : undefined;
}

function needsPassword(): KeyReadError {
  return readError(ReadFailure.NeedsPassword, 'the key is encrypted and no password was given');
}

function wrongPassword(): KeyReadError {
  return readError(ReadFailure.WrongPassword, 'the password does not decrypt the key');
}
