import { X509Certificate } from 'node:crypto';
import { readCappedFile } from '../core/read-capped-file.js';

/** A CA certificate (or a bundle of a few) is kilobytes; anything past this is not one. */
const MAX_CA_FILE_BYTES = 1024 * 1024;

/**
 * A CA file agent.yaml names as a device's trust (`tls.ca`), read and judged when agent.yaml is
 * loaded, as a stick's `tls.ca` is: a PEM certificate (a bundle is kept whole) or a DER one,
 * turned into the PEM TLS takes. Anything else is a problem at its key now: found only at the
 * first connection, it ended `plan` and `apply` in a stack trace. Read like every laptop-side
 * file that is not a stick's: a regular file only (a FIFO named there must not hang the agent).
 */
export async function readAgentCaFile(file: string): Promise<{ pem: string } | { problem: string }> {
  const read = await readCappedFile(file, MAX_CA_FILE_BYTES);
  if (!read.ok) {
    const why = read.why === 'error' ? (read.code ?? 'error') : read.why === 'too-large' ? 'over 1 MiB' : 'not a file';
    return { problem: `CA file ${file} cannot be read (${why})` };
  }
  const bytes = read.bytes;
  try {
    // X509Certificate reads the first certificate of a PEM bundle, or a DER certificate.
    const first = new X509Certificate(bytes);
    return { pem: bytes.includes('-----BEGIN CERTIFICATE-----') ? bytes.toString('utf8') : first.toString() };
  } catch {
    return { problem: `CA file ${file} is not a certificate (PEM or DER)` };
  }
}
