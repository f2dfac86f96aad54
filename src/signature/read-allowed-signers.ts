import { readCappedFile } from '../core/read-capped-file.js';
import { SIGNATURE_LIMITS } from './signature-files.js';

export type AllowedSignersRead = { ok: true; bytes: Buffer } | { ok: false; message: string; hint: string };

/**
 * Reads the laptop's allowed_signers file (agent.yaml `signatures.allowed_signers`). Trusted
 * content, but still opened without blocking (a FIFO there must not hang the agent), checked as a
 * regular file and capped while reading.
 */
export async function readAllowedSigners(file: string): Promise<AllowedSignersRead> {
  const hint = 'list each allowed signer as "PRINCIPAL KEYTYPE BASE64" (ssh-keygen(1), ALLOWED SIGNERS)';
  const limit = SIGNATURE_LIMITS.allowedSignersBytes;
  const read = await readCappedFile(file, limit);
  if (read.ok) return { ok: true, bytes: read.bytes };
  if (read.why === 'not-regular') return { ok: false, message: 'the allowed signers file is not a regular file', hint };
  if (read.why === 'too-large') return { ok: false, message: 'the allowed signers file is larger than 1 MiB', hint };
  if (read.code === 'ENOENT') return { ok: false, message: 'the allowed signers file does not exist', hint };
  if (read.code === 'EACCES' || read.code === 'EPERM')
    return { ok: false, message: 'the allowed signers file cannot be read (permission denied)', hint };
  return { ok: false, message: `the allowed signers file cannot be read (${read.code ?? 'error'})`, hint };
}
