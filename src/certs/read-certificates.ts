import { X509Certificate } from 'node:crypto';
import { pemBlocks } from './pem-blocks.js';
import { type CertReadError, ReadFailure, messageOf, readError } from './read-error.js';

const CERTIFICATE_LABELS = new Set(['CERTIFICATE', 'X509 CERTIFICATE', 'TRUSTED CERTIFICATE']);

/**
 * Reads every certificate of a PEM file (all CERTIFICATE blocks; other blocks are skipped) or the
 * one certificate of a DER file, or the first `limit` of them. Never throws.
 */
export function readCertificates(bytes: Uint8Array, limit = Infinity): X509Certificate[] | CertReadError {
  if (bytes.length === 0) return readError(ReadFailure.Unreadable, 'the file is empty');
  const blocks = pemBlocks(bytes);
  const ders =
    blocks.length === 0
      ? [Buffer.from(bytes)]
      : blocks.filter((b) => CERTIFICATE_LABELS.has(b.label)).map((b) => b.der);
  if (ders.length === 0) return readError(ReadFailure.Unreadable, 'the PEM data holds no CERTIFICATE block');

  const certificates: X509Certificate[] = [];
  for (const [index, der] of ders.slice(0, limit).entries()) {
    try {
      // A TRUSTED CERTIFICATE carries OpenSSL trust settings after the certificate; X509Certificate
      // reads the first DER object and ignores what follows, which is what we want here.
      certificates.push(new X509Certificate(der));
    } catch (caught) {
      return readError(ReadFailure.Unreadable, `certificate ${index + 1} cannot be parsed: ${messageOf(caught)}`);
    }
  }
  return certificates;
}
