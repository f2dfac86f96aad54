import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { firstObjectBytes, readBer } from './ber.js';
import { pemBlocks } from './pem-blocks.js';
import { openPfx } from './pfx-reader.js';

/**
 * What the simulated device's supplicant makes of its files when it authenticates (the model
 * 802.1X backend): certificates read as OpenSSL reads them, a private key opened with the
 * stanza's password as wpa_supplicant opens it (PEM, DER, encrypted or not, or PFX). Never throws:
 * a file the supplicant cannot use gives an empty list or undefined, and the backend says so.
 */

const CERTIFICATE_LABELS = new Set(['CERTIFICATE', 'X509 CERTIFICATE', 'TRUSTED CERTIFICATE']);
const KEY_LABELS = new Set([
  'PRIVATE KEY',
  'ENCRYPTED PRIVATE KEY',
  'RSA PRIVATE KEY',
  'EC PRIVATE KEY',
  'DSA PRIVATE KEY',
]);

/** Every certificate of a PEM file (other blocks skipped), or the one of a DER file. */
export function readCertificates(bytes: Uint8Array): X509Certificate[] {
  const blocks = pemBlocks(bytes);
  const ders =
    blocks.length === 0
      ? [Buffer.from(bytes)]
      : blocks.filter((b) => CERTIFICATE_LABELS.has(b.label)).map((b) => b.der);
  const out: X509Certificate[] = [];
  for (const der of ders) {
    // A TRUSTED CERTIFICATE has OpenSSL's trust settings after the certificate: read the first object.
    const first = firstObjectBytes(der);
    try {
      if (first !== undefined) out.push(new X509Certificate(first));
    } catch {
      // not a certificate: the supplicant skips it
    }
  }
  return out;
}

export interface OpenedKey {
  key: KeyObject;
  /** Certificates a PFX carries beside its key; empty for PEM and DER keys. */
  certificates: X509Certificate[];
}

/** The private key, opened with `password` when it needs one; undefined when it cannot be opened. */
export function openPrivateKey(bytes: Uint8Array, password: string | undefined): OpenedKey | undefined {
  const blocks = pemBlocks(bytes);
  if (blocks.length > 0) {
    const block = blocks.find((b) => KEY_LABELS.has(b.label));
    return block === undefined
      ? undefined
      : loaded(() => createPrivateKey({ key: block.text, format: 'pem', passphrase: password ?? '' }));
  }
  const der = Buffer.from(bytes);
  if (readBer(der) === undefined) return undefined;
  for (const type of ['pkcs8', 'pkcs1', 'sec1'] as const) {
    const plain = loaded(() => createPrivateKey({ key: der, format: 'der', type }));
    if (plain !== undefined) return plain;
  }
  if (password !== undefined) {
    const encrypted = loaded(() => createPrivateKey({ key: der, format: 'der', type: 'pkcs8', passphrase: password }));
    if (encrypted !== undefined) return encrypted;
  }
  const pfx = openPfx(der, password);
  if (typeof pfx === 'string') return undefined;
  const opened = loaded(() => createPrivateKey({ key: pfx.keyDer, format: 'der', type: 'pkcs8' }));
  if (opened === undefined) return undefined;
  const certificates: X509Certificate[] = [];
  for (const certificate of pfx.certificates) {
    try {
      certificates.push(new X509Certificate(certificate));
    } catch {
      // a damaged certificate bag: the supplicant would not use it
    }
  }
  return { key: opened.key, certificates };
}

function loaded(open: () => KeyObject): OpenedKey | undefined {
  try {
    return { key: open(), certificates: [] };
  } catch {
    return undefined;
  }
}
